#include "runtime/device/cublaslt.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace tessera::device {

struct CublasLt::Api {
#define CUBLASLT_FN(name) decltype(&::name) name = nullptr;
#include "runtime/device/cublaslt_api.def"
#undef CUBLASLT_FN
};

CublasLt::~CublasLt() = default;

std::vector<std::string> CublasLt::default_candidates() {
  if (const char* env = std::getenv("TESSERA_CUBLASLT_LIBRARY"); env && *env) return {env};
  std::vector<std::string> c = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) c.push_back(std::string(home) + "/lib64/libcublasLt.so.13");
  c.push_back("/usr/local/cuda/lib64/libcublasLt.so.13");
  return c;
}

const CublasLt& CublasLt::get() {
  static const CublasLt* library = new CublasLt(default_candidates());
  return *library;
}

CublasLt::CublasLt(const std::vector<std::string>& candidates) {
  lib_ = DynamicLibrary::open_first(candidates);
  if (!lib_.is_open()) {
    why_ = fmt::format("{} {} (dlopen: {}): install the CUDA toolkit's cuBLAS or set TESSERA_CUBLASLT_LIBRARY",
                       candidates.empty() ? "libcublasLt.so" : candidates.front(),
                       lib_.not_found() ? "not found" : "could not be loaded", lib_.error());
    return;
  }
  lib_.keep_loaded();  // it registers its own teardown with the CUDA runtime
  auto api = std::make_unique<Api>();
  struct Row {
    const char* name;
    void (*set)(Api&, void*);
  };
  static constexpr Row kRows[] = {
#define CUBLASLT_FN(name) {#name, [](Api& a, void* fn) { a.name = reinterpret_cast<decltype(a.name)>(fn); }},
#include "runtime/device/cublaslt_api.def"
#undef CUBLASLT_FN
  };
  for (const Row& row : kRows) {
    void* fn = lib_.symbol(row.name);
    if (!fn) {
      why_ = fmt::format("{} has no {}: it is not cuBLASLt or is too old", lib_.path(), row.name);
      return;
    }
    row.set(*api, fn);
  }
  version_ = api->cublasLtGetVersion();
  api_ = std::move(api);
  available_ = true;
}

namespace {

void check(const CublasLt& lib, cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(fmt::format("{}: {}", what, lib.api().cublasLtGetStatusString(s)));
}

// A column-major matrix layout of `type` with a batch, destroyed with the scope.
struct Layout {
  const CublasLt& lib;
  cublasLtMatrixLayout_t l = nullptr;
  Layout(const CublasLt& lib, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride)
      : lib(lib) {
    check(lib, lib.api().cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
          "cublasLtMatrixLayoutCreate");
    const int32_t count = static_cast<int32_t>(batch);
    check(lib, lib.api().cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "cublasLtMatrixLayoutSetAttribute(batch count)");
    check(lib, lib.api().cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                          sizeof stride),
          "cublasLtMatrixLayoutSetAttribute(batch stride)");
  }
  ~Layout() { lib.api().cublasLtMatrixLayoutDestroy(l); }
};

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: break;
  }
  throw DeviceError(std::string("a matrix product of ") + dtype_name(t) + " is not built on cuBLASLt (f32, f16, bf16 are)");
}

// The alignment every batch entry of a matrix at `p` has (at most 256, what
// cuBLASLt assumes unless told): a batch stride of an odd number of halves
// leaves entries 2-byte aligned, which only some algorithms take, so the
// heuristic must know.
uint32_t alignment(DevicePtr p, int64_t stride_bytes, int64_t batch) {
  uint64_t bits = p | 256u;
  if (batch > 1 && stride_bytes) bits |= static_cast<uint64_t>(stride_bytes);
  return static_cast<uint32_t>(bits & (~bits + 1));  // the lowest set bit
}

constexpr size_t kWorkspaceBytes = 32u << 20;  // what cuBLAS recommends for Hopper

}  // namespace

GpuGemm::GpuGemm(const CublasLt& lib, GpuStream& stream, DeviceAllocator& alloc)
    : lib_(lib), stream_(stream), alloc_(alloc) {
  if (!lib_.available()) throw DeviceError("cuBLASLt is not available: " + lib_.why_unavailable());
  stream_.device().make_current();
  cublasLtHandle_t h = nullptr;
  check(lib_, lib_.api().cublasLtCreate(&h), "cublasLtCreate");
  handle_ = h;
  workspace_bytes_ = kWorkspaceBytes;
  workspace_ = alloc_.allocate(workspace_bytes_);
}

GpuGemm::~GpuGemm() {
  if (workspace_) alloc_.free(workspace_);
  if (handle_) lib_.api().cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

void GpuGemm::run(const GemmDesc& d) {
  if (d.batch <= 0 || d.m <= 0 || d.n <= 0) return;
  const cudaDataType_t type = cuda_type(d.dtype);
  const int64_t size = static_cast<int64_t>(dtype_size(d.dtype));
  if (d.k <= 0) {  // a sum of nothing (cuBLAS takes no empty inner dim)
    if (d.epilogue != GemmEpilogue::None)
      throw DeviceError("a product with an empty inner dim and a bias epilogue: compute the epilogue of zeros separately");
    stream_.zero(d.c, static_cast<size_t>(((d.batch - 1) * d.stride_c + d.m * d.n) * size));
    return;
  }
  const CublasLt::Api& api = lib_.api();
  // Row-major C = A B is column-major C^T = B^T A^T: B^T is B's buffer read
  // as an n x k column-major matrix, A^T is A's as k x m.
  const Layout lb(lib_, type, d.n, d.k, d.n, d.batch, d.stride_b), la(lib_, type, d.k, d.m, d.k, d.batch, d.stride_a),
      lc(lib_, type, d.n, d.m, d.n, d.batch, d.stride_c);
  // f32 accumulation for every type; TF32 only where asked, for f32 operands.
  const cublasComputeType_t compute =
      d.tf32 && d.dtype == DType::F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasLtMatmulDesc_t desc = nullptr;
  check(lib_, api.cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  struct DescGuard {
    const CublasLt::Api& api;
    cublasLtMatmulDesc_t d;
    ~DescGuard() { api.cublasLtMatmulDescDestroy(d); }
  } desc_guard{api, desc};
  if (d.epilogue != GemmEpilogue::None) {
    // The bias has n elements of C's type (cuBLASLt's rule for non-integer,
    // non-fp8 outputs), added to the f32 accumulator; its batch stride is 0
    // (the default): one bias for every batch entry.
    const cublasLtEpilogue_t epi = d.epilogue == GemmEpilogue::Bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS;
    const void* bias = reinterpret_cast<const void*>(d.bias);
    const int32_t bias_type = type;
    check(lib_, api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
          "cublasLtMatmulDescSetAttribute(epilogue)");
    check(lib_, api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
          "cublasLtMatmulDescSetAttribute(bias pointer)");
    check(lib_, api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type),
          "cublasLtMatmulDescSetAttribute(bias type)");
  }
  cublasLtMatmulPreference_t pref = nullptr;
  check(lib_, api.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  struct PrefGuard {
    const CublasLt::Api& api;
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { api.cublasLtMatmulPreferenceDestroy(p); }
  } pref_guard{api, pref};
  const uint64_t ws = workspace_bytes_;
  check(lib_, api.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(workspace)");
  // cuBLASLt's A is our B and its B our A; C and D are both c.
  const uint32_t c_align = alignment(d.c, d.stride_c * size, d.batch);
  const uint32_t align[] = {alignment(d.b, d.stride_b * size, d.batch), alignment(d.a, d.stride_a * size, d.batch), c_align,
                            c_align};
  const cublasLtMatmulPreferenceAttributes_t align_attr[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (size_t i = 0; i < 4; ++i)
    check(lib_, api.cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &align[i], sizeof(uint32_t)),
          "cublasLtMatmulPreferenceSetAttribute(alignment)");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const auto h = static_cast<cublasLtHandle_t>(handle_);
  check(lib_, api.cublasLtMatmulAlgoGetHeuristic(h, desc, lb.l, la.l, lc.l, lc.l, pref, 1, &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw DeviceError(fmt::format("cuBLASLt has no algorithm for a {}x{}x{} {} product (batch {}, epilogue {})", d.m, d.n,
                                  d.k, dtype_name(d.dtype), d.batch, gemm_epilogue_name(d.epilogue)));
  const float alpha = 1.0f, beta = 0.0f;
  check(lib_,
        api.cublasLtMatmul(h, desc, &alpha, reinterpret_cast<const void*>(d.b), lb.l, reinterpret_cast<const void*>(d.a),
                           la.l, &beta, reinterpret_cast<void*>(d.c), lc.l, reinterpret_cast<void*>(d.c), lc.l, &result.algo,
                           reinterpret_cast<void*>(workspace_), workspace_bytes_, stream_.get()),
        "cublasLtMatmul");
}

}  // namespace tessera::device
