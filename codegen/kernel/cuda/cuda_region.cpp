#include "codegen/kernel/cuda/cuda_region.h"

#include <stdexcept>

namespace tessera::kir {

CudaTarget cuda_target_for(const Region& r, int threads) {
  CudaTarget t;
  t.threads = threads;
  for (const RegionType& in : r.inputs) t.by_value.push_back(!in.tensor);
  return t;
}

std::vector<void*> cuda_kernel_args(const CudaKernelSource& s, const std::vector<void*>& params,
                                    const std::vector<int64_t>& dims, const std::vector<int64_t>& grid) {
  std::vector<void*> args;
  for (const CudaArg& a : s.args) {
    const auto i = static_cast<size_t>(a.index);
    switch (a.kind) {
      case CudaArgKind::Pointer:
      case CudaArgKind::Value: args.push_back(params.at(i)); break;
      case CudaArgKind::Dim: args.push_back(const_cast<int64_t*>(&dims.at(i))); break;
      case CudaArgKind::Grid: args.push_back(const_cast<int64_t*>(&grid.at(i))); break;
    }
  }
  if (args.size() != s.args.size()) throw std::logic_error("cuda_kernel_args: argument list incomplete");
  return args;
}

}  // namespace tessera::kir
