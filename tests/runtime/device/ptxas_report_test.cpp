// parse_ptxas_report on logs as NVRTC 13.0 wrote them (-Xptxas=-v), copied
// from real compiles: two kernels for sm_80, the same for sm_90a (a stack
// frame, no cmem), and a kernel forced to spill (-maxrregcount).
#include "runtime/device/ptxas_report.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace tessera::device {

// Failure messages show the fields, not the bytes.
void PrintTo(const PtxasReport& r, std::ostream* os) {
  *os << "{registers " << r.registers << ", spill stores " << r.spill_stores << ", spill loads " << r.spill_loads
      << ", smem " << r.shared_bytes << ", stack " << r.stack_bytes << "}";
}

namespace {

constexpr const char* kTwoKernelsSm80 =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'big' for 'sm_80'\n"
    "ptxas info    : Function properties for big\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 80 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]\n"
    "ptxas info    : Compile time = 11.756 ms\n"
    "ptxas info    : Compiling entry function 'axpy' for 'sm_80'\n"
    "ptxas info    : Function properties for axpy\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]\n"
    "ptxas info    : Compile time = 1.321 ms\n";

constexpr const char* kTwoKernelsSm90a =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'big' for 'sm_90a'\n"
    "ptxas info    : Function properties for big\n"
    "ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem\n"
    "ptxas info    : Compile time = 8.753 ms\n"
    "ptxas info    : Compiling entry function 'axpy' for 'sm_90a'\n"
    "ptxas info    : Function properties for axpy\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 1.484 ms\n";

constexpr const char* kSpilling =
    "ptxas warning : For profile sm_90 adjusting per thread register count of 16 to lower bound of 24\n"
    "ptxas info    : Overriding maximum register limit 256 for 'heavy' with  24 of maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'heavy' for 'sm_90'\n"
    "ptxas info    : Function properties for heavy\n"
    "ptxas         .     800 bytes stack frame, 1536 bytes spill stores, 1592 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 800 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 39.102 ms\n";

TEST(PtxasReport, ReadsEachKernelsOwnSection) {
  EXPECT_EQ(parse_ptxas_report(kTwoKernelsSm80, "big"), (PtxasReport{.registers = 80, .shared_bytes = 1024}));
  EXPECT_EQ(parse_ptxas_report(kTwoKernelsSm80, "axpy"), PtxasReport{.registers = 10});
}

TEST(PtxasReport, StackFrameAndSharedMemoryOnSm90a) {
  EXPECT_EQ(parse_ptxas_report(kTwoKernelsSm90a, "big"),
            (PtxasReport{.registers = 40, .shared_bytes = 1024, .stack_bytes = 256}));
  EXPECT_EQ(parse_ptxas_report(kTwoKernelsSm90a, "axpy"), PtxasReport{.registers = 10});
}

TEST(PtxasReport, Spills) {
  EXPECT_EQ(parse_ptxas_report(kSpilling, "heavy"),
            (PtxasReport{.registers = 24, .spill_stores = 1536, .spill_loads = 1592, .stack_bytes = 800}));
}

TEST(PtxasReport, AKernelThatIsNotThereHasNoReport) {
  EXPECT_FALSE(parse_ptxas_report(kTwoKernelsSm80, "axp").has_value());  // a prefix of a name is not the name
  EXPECT_FALSE(parse_ptxas_report(kTwoKernelsSm80, "ax").has_value());
  EXPECT_FALSE(parse_ptxas_report(kSpilling, "axpy").has_value());
  EXPECT_FALSE(parse_ptxas_report("", "axpy").has_value());
  // A log without -v (a successful compile's log is empty, or has warnings).
  EXPECT_FALSE(parse_ptxas_report("axpy.cu(2): warning #177-D: variable \"t\" was declared but never referenced\n",
                                  "axpy")
                   .has_value());
}

TEST(PtxasReport, ALogWithoutATrailingNewline) {
  std::string log = kSpilling;
  log.pop_back();
  EXPECT_EQ(parse_ptxas_report(log, "heavy"),
            (PtxasReport{.registers = 24, .spill_stores = 1536, .spill_loads = 1592, .stack_bytes = 800}));
}

}  // namespace
}  // namespace tessera::device
