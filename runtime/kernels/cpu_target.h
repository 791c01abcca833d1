// CpuTarget: fused calls' kernels on the host CPU (kernel_target.h): the
// region lowered to kernel IR (codegen/kernel/lower_region.h), emitted as
// LLVM IR and compiled to an object (codegen/kernel/cpu/cpu_compiler.h),
// linked into the VM's LLVM JIT, launched over oneTBB (cpu_launch.h). K2 is
// compiled before the first call goes on; K3 variants are timed on the
// background thread, on synthetic inputs. With a --dump directory each
// kernel's kernel IR, LLVM IR, CUDA C++ and PTX are written there as it is
// made.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "codegen/kernel/cpu/cpu_compiler.h"
#include "runtime/kernels/kernel_store.h"
#include "runtime/kernels/kernel_target.h"
#include "vm/core/text_file.h"

namespace tessera::kernels {

class CpuTarget : public KernelTarget {
 public:
  explicit CpuTarget(KernelStore& store) : store_(store) {}

  const char* name() const override { return "cpu"; }
  std::string arch() const override;
  std::string refuses(const Region&) const override { return {}; }
  bool builds_k2_in_background() const override { return false; }
  bool tunes() const override { return true; }
  bool times_at_call() const override { return false; }
  // Rounds of every variant until each has 2 ms of runs (3 to 50 rounds).
  TimingPlan timing_plan() const override { return TimingPlan{3, 50, 2.0}; }
  // K2's variant first; then tiles and layouts (row kernels have one
  // layout); then each of those whose grid is short also on every core
  // (a larger grid keeps every core: timings made beside the running program
  // cannot tell a serial variant from a parallel one).
  std::vector<KernelVariant> variants(const Region& r, const DimSpec& spec,
                                      const std::vector<int64_t>& sym) const override;
  std::shared_ptr<const TargetKernel> compile(const Region& r, const DimSpec& spec, const KernelVariant& v) override;
  std::optional<Value> launch(const Region& r, const TargetKernel& k, std::span<const Value> inputs,
                              const std::vector<int64_t>& sym, CallTuning* tuning, std::string& why) override;
  std::function<double(const TargetKernel&)> timer(const Region& r, const std::vector<int64_t>& sym) override;

  // --dump: where each kernel's files go (empty: none).
  void set_dump_dir(std::string dir);
  // The first dump file that could not be written ("PATH: REASON"), or "".
  std::string dump_error() const;

  // Made at its first use (thread-safe): LLVM's target machine and JIT took
  // milliseconds of every run's start-up, programs without tensors too.
  kir::CpuKernelCompiler& compiler() const;

 private:
  void dump(const std::string& identity, const kir::Kernel& k, const Region& r, const std::string& llvm_ir);

  KernelStore& store_;
  mutable std::once_flag compiler_made_;
  mutable std::unique_ptr<kir::CpuKernelCompiler> compiler_;
  mutable std::mutex mu_;  // dump_dir_, dump_error_
  std::string dump_dir_;
  FirstWriteError dump_error_;
};

}  // namespace tessera::kernels
