// kernel_golden STAGE [OPTION...] FILE: the text one kernel stage makes of
// FILE's IR, for the golden-text tests (golden_test.py checks it against
// FILE's CHECK lines, filecheck.py).
//
// FILE holds a region of Graph IR operations, as Region::str() prints it
// and the .kir files of --dump show it (`%2 = mul(%0, %1) : f32[s0]`, ...,
// `outputs %2`), or one kernel's kernel IR text (`kernel @name ...`); lines
// starting with `//` are left out (RUN and CHECK lines among them).
//
// Stages:
//   kir   the region lowered to kernel IR (codegen/kernel/lower_region.h), printed
//   cuda  the kernel as CUDA C++ (codegen/kernel/cuda/cuda_emitter.h), after a
//         line `// threads T shared_bytes B`
//   llvm  the kernel as LLVM IR, as the CPU emitter makes it before any pass
//         (codegen/kernel/cpu/cpu_emitter.h)
// Options: tile=N (elements per program), flat (rank >= 2 as flat tiles),
// k3=V,V,... (a K3 kernel: the symbols' values in order, `_` for one that
// stays a dim), lanes=N (the CPU emitter's f32 lanes, default 8), threads=N
// (CUDA threads per block, default from the kernel).
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel/cpu/cpu_emitter.h"
#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/kernel_text.h"
#include "codegen/kernel/kernel_verify.h"
#include "codegen/kernel/lower_region.h"

namespace {

using namespace tessera;

struct Options {
  std::string stage, file;
  kir::RegionLowering lowering;
  kir::CpuTarget cpu;
  kir::CudaTarget cuda;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

Options parse_args(int argc, char** argv) {
  if (argc < 3) throw std::invalid_argument("usage: kernel_golden kir|cuda|llvm [OPTION...] FILE");
  Options o;
  o.stage = argv[1];
  o.file = argv[argc - 1];
  if (o.stage != "kir" && o.stage != "cuda" && o.stage != "llvm")
    throw std::invalid_argument("unknown stage '" + o.stage + "' (kir, cuda or llvm)");
  for (int i = 2; i < argc - 1; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "tile") o.lowering.tile = std::stoll(value);
    else if (key == "flat") o.lowering.flat = true;
    else if (key == "k3")
      for (const std::string& v : split(value, ','))
        o.lowering.symbol_values.push_back(v == "_" ? std::nullopt : std::optional<int64_t>(std::stoll(v)));
    else if (key == "lanes") o.cpu.lanes = std::stoi(value);
    else if (key == "threads") o.cuda.threads = std::stoi(value);
    else throw std::invalid_argument("unknown option '" + a + "'");
  }
  return o;
}

// FILE without its `//` lines.
std::string ir_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") != 0) out += line + "\n";
  }
  return out;
}

kir::Kernel kernel_of(const std::string& text, const Options& o) {
  if (text.rfind("kernel", 0) == 0) return kir::parse(text);
  return kir::lower_region(parse_region(text), "region", o.lowering);
}

std::string stage_text(const kir::Kernel& k, const Options& o) {
  if (o.stage == "kir") return kir::print(k);
  if (o.stage == "cuda") {
    const kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "region_kernel", o.cuda);
    return "// threads " + std::to_string(src.threads) + " shared_bytes " + std::to_string(src.shared_bytes) +
           "\n" + src.source;
  }
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = kir::emit_cpu_kernel(k, "region_kernel", ctx, o.cpu);
  std::string out;
  llvm::raw_string_ostream os(out);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse_args(argc, argv);
    const kir::Kernel k = kernel_of(ir_text(o.file), o);
    if (auto errors = kir::verify(k); !errors.empty()) {
      std::cerr << "kernel_golden: " << o.file << ": the kernel does not verify:\n";
      for (const auto& e : errors) std::cerr << "  " << e << "\n";
      return 1;
    }
    std::cout << stage_text(k, o);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kernel_golden: " << e.what() << "\n";
    return 2;
  }
}
