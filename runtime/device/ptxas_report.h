// PtxasReport: what ptxas says about one compiled kernel when NVRTC runs it
// verbose (-Xptxas=-v or --ptxas-options=-v): registers per thread, spills,
// static shared memory, stack frame. The tuner and --stats read it, and
// tests assert that a generated kernel does not spill.
//
// NVRTC 13 writes these lines into the program log, per entry function:
//   ptxas info    : Compiling entry function 'axpy' for 'sm_80'
//   ptxas info    : Function properties for axpy
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]
// ("..., 1024 bytes smem, ..." on the "Used" line when the kernel has static
// shared memory).
#pragma once

#include <optional>
#include <string_view>

namespace tessera::device {

struct PtxasReport {
  int registers = -1;  // per thread
  int spill_stores = 0, spill_loads = 0;  // bytes
  int shared_bytes = 0;                   // static shared memory
  int stack_bytes = 0;                    // stack frame

  bool operator==(const PtxasReport&) const = default;
};

// The report of entry function `kernel` (its name as ptxas prints it: the
// extern "C" name, or the mangled one) in an NVRTC log; nullopt when the log
// has no "Compiling entry function 'kernel'" section with a "Used N
// registers" line (not verbose, or no such kernel).
std::optional<PtxasReport> parse_ptxas_report(std::string_view log, std::string_view kernel);

}  // namespace tessera::device
