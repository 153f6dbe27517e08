#include "train/distributed/world.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "base/error.h"

#ifdef HEED_HAVE_MPI
#include <mpi.h>
#endif

namespace heed::train {
namespace {

// MPI counts are ints: one message carries at most 1 GiB.
constexpr size_t kMaxMessage = size_t{1} << 30;

}  // namespace

// Open MPI's launcher sets these for each rank it starts (PMIx for newer launchers).
bool World::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

int World::ranks_on_this_machine() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int n = local ? std::atoi(local) : 1;
  return n > 0 ? n : 1;
}

void World::broadcast(std::string& text, int root) const {
  uint64_t size = text.size();
  broadcast(&size, sizeof size, root);
  text.resize(size);
  broadcast(text.data(), size, root);
}

World& World::get() {
  static World world;
  return world;
}

bool World::available() {
#ifdef HEED_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef HEED_HAVE_MPI

World::World() {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  // Funneled: only the thread that called init makes MPI calls (OpenMP threads never do).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() {
  if (started_) MPI_Finalize();
}

void World::sum(std::span<double> values) const {
  if (size_ == 1 || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
}

void World::sum(std::span<int64_t> values) const {
  if (size_ == 1 || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                MPI_COMM_WORLD);
}

bool World::any(bool flag) const {
  if (size_ == 1) return flag;
  int value = flag ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return value != 0;
}

int World::max(int value) const {
  if (size_ == 1) return value;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

void World::broadcast(void* data, size_t bytes, int root) const {
  if (size_ == 1 || bytes == 0) return;
  // MPI counts are ints: large tensors go in pieces of 1 GiB.
  constexpr size_t kPiece = kMaxMessage;
  auto* p = static_cast<char*>(data);
  for (size_t done = 0; done < bytes; done += kPiece) {
    const size_t n = std::min(kPiece, bytes - done);
    MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD);
  }
}

void World::broadcast_all(std::span<const Piece> pieces) const {
  if (size_ == 1) return;
  std::vector<MPI_Request> requests;
  for (const Piece& p : pieces) {
    HEED_CHECK(p.bytes <= kMaxMessage, "a broadcast of {} bytes (at most {} at once)", p.bytes,
               kMaxMessage);
    requests.push_back(MPI_REQUEST_NULL);
    MPI_Ibcast(p.data, static_cast<int>(p.bytes), MPI_BYTE, p.root, MPI_COMM_WORLD,
               &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

void World::send(const void* data, size_t bytes, int to) const {
  HEED_CHECK(bytes <= kMaxMessage, "a message of {} bytes (at most {})", bytes, kMaxMessage);
  MPI_Send(data, static_cast<int>(bytes), MPI_BYTE, to, 0, MPI_COMM_WORLD);
}

void World::receive(void* data, size_t bytes, int from) const {
  HEED_CHECK(bytes <= kMaxMessage, "a message of {} bytes (at most {})", bytes, kMaxMessage);
  MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void World::barrier() const {
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
}

void World::abort(int exit_code) const {
  if (started_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

#else  // a build without MPI: a world of one

World::World() = default;
World::~World() = default;
void World::sum(std::span<double>) const {}
void World::sum(std::span<int64_t>) const {}
bool World::any(bool flag) const {
  return flag;
}
int World::max(int value) const {
  return value;
}
void World::broadcast(void*, size_t, int) const {}
void World::broadcast_all(std::span<const Piece>) const {}
void World::send(const void*, size_t, int) const {
  throw Error("send: this build has no MPI");
}
void World::receive(void*, size_t, int) const {
  throw Error("receive: this build has no MPI");
}
void World::barrier() const {}
void World::abort(int exit_code) const {
  std::exit(exit_code);
}

#endif

}  // namespace heed::train
