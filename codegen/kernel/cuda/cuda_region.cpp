#include "codegen/kernel/cuda/cuda_region.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace tessera::kir {

CudaTarget cuda_target_for(const Region& r, int threads) {
  CudaTarget t;
  t.threads = threads;
  for (const RegionType& in : r.inputs) t.by_value.push_back(!in.tensor);
  return t;
}

std::vector<void*> cuda_kernel_args(const CudaKernelSource& s, const std::vector<void*>& params,
                                    const std::vector<int64_t>& dims, const std::vector<int64_t>& grid,
                                    std::vector<TensorMapBytes>* maps, const TensorMapEncoder& encode) {
  size_t n_maps = 0;
  for (const CudaArg& a : s.args) n_maps += a.kind == CudaArgKind::TensorMap;
  if (n_maps && (!maps || !encode))
    throw std::logic_error("cuda_kernel_args: kernel " + s.entry + " takes tensor maps and the launcher has no encoder");
  if (n_maps) {
    maps->clear();
    maps->reserve(n_maps);  // the arguments point into it
  }
  std::vector<void*> args;
  for (const CudaArg& a : s.args) {
    const auto i = static_cast<size_t>(a.index);
    switch (a.kind) {
      case CudaArgKind::Pointer:
      case CudaArgKind::Value: args.push_back(params.at(i)); break;
      case CudaArgKind::Dim: args.push_back(const_cast<int64_t*>(&dims.at(i))); break;
      case CudaArgKind::Grid: args.push_back(const_cast<int64_t*>(&grid.at(i))); break;
      case CudaArgKind::TensorMap: {
        TensorMapRequest rq;
        rq.base = *static_cast<const uint64_t*>(params.at(i));
        rq.elem = a.elem;
        uint64_t numel = 1;
        for (const DimRef& d : a.shape) numel *= static_cast<uint64_t>(d.dim >= 0 ? dims.at(static_cast<size_t>(d.dim)) : d.value);
        rq.cols = static_cast<uint64_t>(a.shape.back().dim >= 0 ? dims.at(static_cast<size_t>(a.shape.back().dim))
                                                                 : a.shape.back().value);
        rq.rows = rq.cols ? numel / rq.cols : 0;
        rq.row_bytes = rq.cols * 2;
        rq.box_cols = 8;
        rq.box_rows = static_cast<unsigned>(a.box_rows);
        // An empty matrix has no map (cuTensorMapEncodeTiled refuses zero
        // dims); its kernel never issues a box, so the bytes stay zeros.
        TensorMapBytes& m = maps->emplace_back();  // value-initialized: zeros
        if (rq.rows && rq.cols && !encode(rq, m)) std::fill(std::begin(m.bytes), std::end(m.bytes), 0);
        args.push_back(m.bytes);
        break;
      }
    }
  }
  if (args.size() != s.args.size()) throw std::logic_error("cuda_kernel_args: argument list incomplete");
  return args;
}

}  // namespace tessera::kir
