#pragma once
// Data-parallel gradient averaging, as PyTorch's DistributedDataParallel does it: the
// parameters' gradients are packed into flat buckets of about `bucket_bytes`, in the reverse
// order of the parameters (roughly the order backward produces them), and each bucket's sum
// over the ranks (MPI_Iallreduce) starts as soon as all of its gradients are final, while
// backward goes on with the layers below. Open MPI does not advance a non-blocking collective
// by itself, so every gradient that becomes final also tests the buckets in flight. The reducer
// attaches a post-accumulate-grad hook to each parameter; between prepare() and finish() they
// start the sums (DDP outside no_sync()), otherwise they do nothing (accumulation steps).
//
//   reducer.prepare();                     // before the last micro-batch's backward
//   loss.backward();
//   reducer.finish();                      // sums are in every .grad
//
// The reducer sums; the caller scales each rank's loss so that the sum is the global mean.
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "autograd/grad_ready_hook.h"
#include "autograd/tensor.h"
#include "train/distributed/world.h"
#include "train/run/step_sync.h"

namespace heed::train {

class GradientReducer {
 public:
  GradientReducer(const World& world, std::vector<Tensor> params, int64_t bucket_bytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Forgets the previous step's buckets and arms the hooks: call before the backward whose
  // gradients complete the step (the last micro-batch's).
  void prepare();
  // Starts the buckets backward left (parameters it did not reach), waits for every sum, and
  // writes them into the gradients. A parameter without a gradient on any rank keeps none. The
  // hooks are idle again after it.
  ReductionStats finish();

  int64_t num_buckets() const { return static_cast<int64_t>(buckets_.size()); }
  const World& world() const { return world_; }

 private:
  struct Bucket;
  void on_grad_ready(const TensorImpl& leaf);
  void start(Bucket& bucket);
  void progress();

  const World& world_;
  std::vector<Tensor> params_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::unordered_map<const TensorImpl*, Bucket*> bucket_of_;  // each parameter's
  std::vector<GradHookHandle> hooks_;                         // one per parameter
  bool armed_ = false;                                        // from prepare() to finish()
  size_t next_ = 0;                                           // the first bucket not started
  ReductionStats stats_;
};

}  // namespace heed::train
