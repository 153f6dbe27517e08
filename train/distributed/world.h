#pragma once
// The processes of a data-parallel run: `mpirun -np N train ...` starts N ranks of one MPI job
// (Open MPI). A run started without mpirun, or a build without MPI, is a world of one, and
// every call here is then a no-op; so the trainer has one code path.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace heed::train {

class World {
 public:
  // The process's world: MPI is started on first use when the process was launched by mpirun
  // (its environment says so), and finalized at exit.
  static World& get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_main() const { return rank_ == 0; }
  bool distributed() const { return size_ > 1; }
  // Whether this build can run distributed at all (it was built with MPI).
  static bool available();
  // Whether mpirun started this process (its environment says so), with MPI built in or not.
  static bool launched_by_mpirun();
  // How many ranks of the job run on this machine (1 outside mpirun).
  static int ranks_on_this_machine();

  // Element-wise sums over the ranks, in place.
  void sum(std::span<double> values) const;
  void sum(std::span<int64_t> values) const;
  // Whether `flag` is set on any rank.
  bool any(bool flag) const;
  // The largest of the ranks' values.
  int max(int value) const;
  // Rank `root`'s text, on every rank.
  void broadcast(std::string& text, int root = 0) const;
  // Rank `root`'s bytes, on every rank.
  void broadcast(void* data, size_t bytes, int root = 0) const;
  // Many broadcasts at once, each from its own root, all in flight together.
  struct Piece {
    void* data;
    size_t bytes;
    int root;
  };
  void broadcast_all(std::span<const Piece> pieces) const;
  // Point to point, for gathering what one rank holds onto another.
  void send(const void* data, size_t bytes, int to) const;
  void receive(void* data, size_t bytes, int from) const;
  // Returns once every rank has called it.
  void barrier() const;
  // Ends the whole job: the other ranks are stopped by mpirun (MPI_Abort). For a failure on
  // one rank, after its message is out, so that no rank waits for it for ever.
  [[noreturn]] void abort(int exit_code) const;

 private:
  World();
  ~World();
  int rank_ = 0;
  int size_ = 1;
  bool started_ = false;
};

}  // namespace heed::train
