#pragma once
// SIGINT, SIGTERM and SIGUSR1 ask a training run to stop: the loop notices after the step it is
// in, writes a checkpoint and ends cleanly, rather than die with its work since the last one.
//  - Before the first run begins (reading and tokenizing data), a signal does what it would by
//    default: it ends the process, as there is nothing to save yet.
//  - From then on, the first signal is the stop request. It stays requested: if it arrives
//    after the run has ended (a rank that stopped because another rank was signalled), nothing
//    more happens.
//  - A second signal ends the process at once, as by default, for a user who will not wait;
//    checkpoints are written whole or not at all, so the last one stays usable.
//
// The signals never interrupt a compute thread. oneDNN 2.6's no-copy f32 gemm kernels
// (jit_avx512_common_gemm_f32.cpp, jit_avx_gemm_f32.cpp; `x64:gemm:jit`, which the
// inner-product weight gradients use) set the stack pointer to a workspace from posix_memalign
// while they run, whenever a block of K exceeds what fits on the stack (84 rows with AVX-512).
// A handler run on such a thread has the kernel write its ~3 KB signal frame into the heap below
// that workspace (seen as "corrupted size vs. prev_size" aborts after a SIGTERM). install()
// therefore blocks the three signals before any other thread exists, every thread started later
// inherits that mask, and one watcher thread takes the signals with sigwait().
//
// Under Open MPI, send SIGUSR1 to mpirun: it forwards that to every rank unchanged. On SIGTERM
// or SIGINT mpirun ends the job itself (SIGTERM to the ranks a second later, SIGKILL a second
// after that), which a long step does not survive. Schedulers that signal each rank (SLURM's
// scancel, Kubernetes) may send any of the three. PyTorch Lightning also saves on SIGUSR1.

#include <array>
#include <csignal>

namespace heed::train {

class StopSignals {
 public:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGUSR1};

  // Blocks the signals in the calling thread and starts the watcher: once per process, before
  // any other thread starts (a thread started earlier could still be interrupted).
  static void install();

  // A run begins: from now on the first signal is a stop request. Calls install() if the
  // program did not (library use).
  static void run_begins();

  // The signal that requested a stop, or 0.
  static int received();
};

}  // namespace heed::train
