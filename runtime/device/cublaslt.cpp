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

// A column-major f32 matrix layout with a batch, destroyed with the scope.
struct Layout {
  const CublasLt& lib;
  cublasLtMatrixLayout_t l = nullptr;
  Layout(const CublasLt& lib, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) : lib(lib) {
    check(lib, lib.api().cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, static_cast<uint64_t>(rows),
                                                    static_cast<uint64_t>(cols), ld),
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

void GpuGemm::run(int64_t batch, int64_t m, int64_t n, int64_t k, DevicePtr a, int64_t stride_a, DevicePtr b,
                  int64_t stride_b, DevicePtr c, int64_t stride_c) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  if (k <= 0) {  // a sum of nothing (cuBLAS takes no empty inner dim)
    stream_.zero(c, static_cast<size_t>((batch - 1) * stride_c + m * n) * sizeof(float));
    return;
  }
  const CublasLt::Api& api = lib_.api();
  // Row-major C = A B is column-major C^T = B^T A^T: B^T is B's buffer read
  // as an n x k column-major matrix, A^T is A's as k x m.
  const Layout lb(lib_, n, k, n, batch, stride_b), la(lib_, k, m, k, batch, stride_a),
      lc(lib_, n, m, n, batch, stride_c);
  cublasLtMatmulDesc_t desc = nullptr;
  check(lib_, api.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  struct DescGuard {
    const CublasLt::Api& api;
    cublasLtMatmulDesc_t d;
    ~DescGuard() { api.cublasLtMatmulDescDestroy(d); }
  } desc_guard{api, desc};
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
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const auto h = static_cast<cublasLtHandle_t>(handle_);
  check(lib_, api.cublasLtMatmulAlgoGetHeuristic(h, desc, lb.l, la.l, lc.l, lc.l, pref, 1, &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw DeviceError(fmt::format("cuBLASLt has no algorithm for a {}x{}x{} f32 product (batch {})", m, n, k, batch));
  const float alpha = 1.0f, beta = 0.0f;
  check(lib_,
        api.cublasLtMatmul(h, desc, &alpha, reinterpret_cast<const void*>(b), lb.l, reinterpret_cast<const void*>(a), la.l,
                           &beta, reinterpret_cast<void*>(c), lc.l, reinterpret_cast<void*>(c), lc.l, &result.algo,
                           reinterpret_cast<void*>(workspace_), workspace_bytes_, stream_.get()),
        "cublasLtMatmul");
}

}  // namespace tessera::device
