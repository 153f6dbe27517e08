#include "train/distributed/gradient_reducer.h"

#include <chrono>
#include <cstring>

#include "autograd/ops.h"
#include "base/error.h"

#ifdef HEED_HAVE_MPI
#include <mpi.h>
#endif

namespace heed::train {

// The gradients of a few consecutive parameters, packed into one buffer: each one's elements,
// then one flag per parameter (1 where this rank has a gradient), so that one sum also says
// which parameters have a gradient on some rank.
struct GradientReducer::Bucket {
  std::vector<size_t> params;
  std::vector<int64_t> offsets;  // of each parameter's elements in `buffer`
  int64_t elements = 0;
  std::vector<float> buffer;
  size_t remaining = 0;  // gradients of this step not yet final
  bool started = false, done = false;
#ifdef HEED_HAVE_MPI
  MPI_Request request = MPI_REQUEST_NULL;
#endif
};

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

GradientReducer::GradientReducer(const World& world, std::vector<Tensor> params,
                                 int64_t bucket_bytes)
    : world_(world), params_(std::move(params)) {
  HEED_CHECK(bucket_bytes > 0, "gradient buckets must hold at least one byte, got {}",
             bucket_bytes);
  // Backward reaches the last layers first: buckets fill in reverse parameter order.
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    HEED_CHECK(p.dtype() == DType::f32, "data-parallel training needs f32 parameters, got {}",
               dtype_name(p.dtype()));
    if (buckets_.empty() || buckets_.back()->elements * 4 >= bucket_bytes) {
      buckets_.push_back(std::make_unique<Bucket>());
    }
    Bucket& b = *buckets_.back();
    bucket_of_[p.impl()] = &b;
    b.params.push_back(k);
    b.offsets.push_back(b.elements);
    b.elements += p.numel();
  }
  for (auto& b : buckets_) b->buffer.resize(b->elements + b->params.size());
  for (const Tensor& p : params_) {
    hooks_.push_back(register_post_accumulate_grad_hook(
        p, [this](const TensorImpl& leaf) { on_grad_ready(leaf); }));
  }
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::prepare() {
  for (auto& b : buckets_) {
    b->remaining = b->params.size();
    b->started = b->done = false;
  }
  next_ = 0;
  stats_ = ReductionStats{};
  armed_ = true;
}

void GradientReducer::on_grad_ready(const TensorImpl& leaf) {
  if (!armed_) return;  // a backward of an earlier micro-batch: its gradients are not final
  if (auto it = bucket_of_.find(&leaf); it != bucket_of_.end() && it->second->remaining > 0) {
    --it->second->remaining;
  }
  // Every rank must start the same collectives in the same order, and the order in which
  // buckets complete may differ between ranks (a rank whose rows reach fewer parameters, a
  // tied embedding that is final only at the end): buckets start in their own order, each as
  // soon as it and every bucket before it are complete.
  while (next_ < buckets_.size() && buckets_[next_]->remaining == 0) {
    start(*buckets_[next_++]);
    ++stats_.started_in_backward;
  }
  progress();
}

void GradientReducer::start(Bucket& b) {
  for (size_t i = 0; i < b.params.size(); ++i) {
    const Tensor grad = params_[b.params[i]].grad();
    float* into = b.buffer.data() + b.offsets[i];
    const int64_t n = params_[b.params[i]].numel();
    if (grad.defined()) {
      const Tensor g = grad.contiguous();
      std::memcpy(into, g.data<float>(), static_cast<size_t>(n) * sizeof(float));
    } else {
      std::memset(into, 0, static_cast<size_t>(n) * sizeof(float));
    }
    b.buffer[b.elements + i] = grad.defined() ? 1.0f : 0.0f;
  }
  b.started = true;
  stats_.bytes += b.elements * 4;
  ++stats_.buckets;
#ifdef HEED_HAVE_MPI
  if (world_.distributed()) {
    MPI_Iallreduce(MPI_IN_PLACE, b.buffer.data(), static_cast<int>(b.buffer.size()), MPI_FLOAT,
                   MPI_SUM, MPI_COMM_WORLD, &b.request);
    return;
  }
#endif
  b.done = true;
}

void GradientReducer::progress() {
#ifdef HEED_HAVE_MPI
  for (auto& b : buckets_) {
    if (!b->started || b->done) continue;
    int finished = 0;
    MPI_Test(&b->request, &finished, MPI_STATUS_IGNORE);
    b->done = finished != 0;
  }
#endif
}

ReductionStats GradientReducer::finish() {
  armed_ = false;
  while (next_ < buckets_.size()) start(*buckets_[next_++]);
  const auto waiting = Clock::now();
#ifdef HEED_HAVE_MPI
  for (auto& b : buckets_) {
    if (!b->done) MPI_Wait(&b->request, MPI_STATUS_IGNORE);
    b->done = true;
  }
#endif
  stats_.wait_seconds = std::chrono::duration<double>(Clock::now() - waiting).count();
  for (auto& b : buckets_) {
    for (size_t i = 0; i < b->params.size(); ++i) {
      Tensor& p = params_[b->params[i]];
      if (b->buffer[b->elements + i] == 0.0f) continue;  // no rank has a gradient
      Tensor grad = p.grad();
      if (!grad.defined() || !grad.is_contiguous()) {
        grad = zeros(p.shape(), DType::f32);
        p.set_grad(grad);
      }
      std::memcpy(grad.data<float>(), b->buffer.data() + b->offsets[i],
                  static_cast<size_t>(p.numel()) * sizeof(float));
    }
  }
  return stats_;
}

}  // namespace heed::train
