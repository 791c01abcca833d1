// Attention and half-precision products on a GPU, through the GPU kernel
// target's public interface (runtime/kernels/gpu_target.h: variants,
// compile, launch, and its backend's time_ms), so that the benchmark follows
// the target when its kernels change. Per cell (a configuration):
//   K2   the region's kernel with every dim a parameter (an empty DimSpec);
//   K3   every variant the target offers for these dims as constants,
//        compiled in parallel, each timed briefly; the fastest is measured
//        in full and named.
// Measured: warm-up launches, then samples of launches between the device's
// timer (CUDA events on a GPU; the host's clock on the emulation), on inputs
// made once (after the first launch they stay on the device); the median,
// its 95% confidence interval (order statistics) and TFLOP/s. The output is
// compared with the interpreter's (run_region_reference) on a sample of the
// output (attention: the first and last heads; products: the first and last
// rows) where that is affordable on the host, else skipped with a note.
//
//   attention_bench [--profile quick|full|emulation] [CELL ...] [--json FILE] [--list] ...
//   CELL: attention/BxHxSxD/f16|bf16|f32/causal|full, matmul/MxNxK/DTYPE,
//         matmul_bias_relu/MxNxK/DTYPE
// The device: the CUDA backend on a GPU; the host emulation with --emulation
// (or TESSERA_GPU_EMULATION=1 where no GPU is usable, docs/gpu.md). Without
// either, it prints why and writes a JSON saying so (exit 0).
// experiments/harness/run_attention_bench.py runs it and PyTorch's peers and
// writes the tables (experiments/README.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/device/cuda_backend.h"
#include "runtime/device/device_error.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/emulated_backend.h"
#include "runtime/kernels/gpu_target.h"
#include "runtime/kernels/kernel_store.h"
#include "vm/graph/region.h"

namespace {

using namespace tessera;
using namespace tessera::kernels;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ------------------------------------------------------------------ cells

struct Cell {
  std::string kind;  // "attention", "matmul", "matmul_bias_relu"
  DType dtype = DType::F16;
  std::vector<int64_t> shape;  // attention: B, H, S, D; products: M, N, K
  bool causal = false;         // attention
  std::string group;           // the table it belongs to

  bool attention() const { return kind == "attention"; }
  std::string id() const {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    return kind + "/" + dims + "/" + dtype_name(dtype) + (attention() ? (causal ? "/causal" : "/full") : "");
  }
  // FlashAttention-2's count: 4 B S^2 H D, halved when causal; products 2 M N K.
  double flops() const {
    if (attention()) {
      const double f = 4.0 * static_cast<double>(shape[0]) * static_cast<double>(shape[2]) *
                       static_cast<double>(shape[2]) * static_cast<double>(shape[1]) * static_cast<double>(shape[3]);
      return causal ? f / 2 : f;
    }
    return 2.0 * static_cast<double>(shape[0]) * static_cast<double>(shape[1]) * static_cast<double>(shape[2]);
  }
  json to_json() const {
    return {{"id", id()}, {"kind", kind}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"causal", causal},
            {"group", group}, {"flops", flops()}};
  }
};

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "f16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "f32") return DType::F32;
  return std::nullopt;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

// "attention/1x8x512x64/f16/causal", "matmul/1024x1024x1024/bf16".
Cell parse_cell(const std::string& text) {
  const std::vector<std::string> p = split(text, '/');
  auto bad = [&](const std::string& why) { return std::invalid_argument("cell '" + text + "': " + why); };
  if (p.size() < 3) throw bad("expected KIND/DIMS/DTYPE[/causal|full]");
  Cell c;
  c.kind = p[0];
  c.group = "command line";
  if (c.kind != "attention" && c.kind != "matmul" && c.kind != "matmul_bias_relu") throw bad("unknown kind " + c.kind);
  for (const std::string& d : split(p[1], 'x')) {
    char* end = nullptr;
    const long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v <= 0) throw bad("bad dim '" + d + "'");
    c.shape.push_back(v);
  }
  const size_t want = c.attention() ? 4 : 3;
  if (c.shape.size() != want) throw bad(fmt::format("{} dims expected", want));
  const std::optional<DType> dt = parse_dtype(p[2]);
  if (!dt) throw bad("dtype is f16, bf16 or f32");
  c.dtype = *dt;
  if (c.attention()) {
    if (p.size() != 4 || (p[3] != "causal" && p[3] != "full")) throw bad("attention ends in /causal or /full");
    c.causal = p[3] == "causal";
  } else if (p.size() != 3) {
    throw bad("a product has no fourth part");
  }
  return c;
}

void add_cell(std::vector<Cell>& cells, Cell c) {
  for (const Cell& have : cells)
    if (have.id() == c.id()) return;  // the first group that names it keeps it
  cells.push_back(std::move(c));
}

void add_attention(std::vector<Cell>& cells, const char* group, std::vector<int64_t> bhsd, DType dt, bool causal) {
  add_cell(cells, Cell{"attention", dt, std::move(bhsd), causal, group});
}

void add_products(std::vector<Cell>& cells, std::initializer_list<int64_t> sizes) {
  for (const char* kind : {"matmul", "matmul_bias_relu"})
    for (int64_t n : sizes)
      for (DType dt : {DType::F16, DType::BF16}) add_cell(cells, Cell{kind, dt, {n, n, n}, false, "products"});
}

// The built-in lists. "full": the design documents' configurations (causal,
// f16; bf16 where they compare precisions) and the FlashAttention papers'
// grid (B * S = 16384, hidden 2048, D 64 and 128, causal and not, f16 and
// bf16), then the products. "quick": the small and medium configurations,
// the precision pair and the products up to 4096. "emulation": tiny sizes
// for the host emulation (tests).
std::vector<Cell> profile_cells(const std::string& profile) {
  std::vector<Cell> c;
  const DType f16 = DType::F16, bf16 = DType::BF16;
  if (profile == "emulation") {
    for (DType dt : {f16, bf16})
      for (bool causal : {false, true}) {
        add_attention(c, "emulation", {1, 2, 64, 64}, dt, causal);
        add_attention(c, "emulation", {1, 2, 80, 48}, dt, causal);
      }
    add_products(c, {64});
    return c;
  }
  if (profile != "quick" && profile != "full") throw std::invalid_argument("profile is quick, full or emulation");
  const bool full = profile == "full";
  for (auto s : {std::vector<int64_t>{1, 8, 512, 64}, {1, 8, 1024, 64}, {2, 8, 512, 64}}) add_attention(c, "small", s, f16, true);
  for (auto s : {std::vector<int64_t>{4, 16, 2048, 64}, {8, 16, 2048, 64}, {4, 16, 4096, 64}})
    add_attention(c, "medium", s, f16, true);
  for (DType dt : {f16, bf16}) add_attention(c, "mixed precision", {8, 16, 2048, 64}, dt, true);
  if (!full) {
    add_products(c, {1024, 4096});
    return c;
  }
  for (int64_t s : {1024, 2048, 4096, 8192}) add_attention(c, "variable length", {8, 16, s, 64}, f16, true);
  for (auto s : {std::vector<int64_t>{16, 32, 4096, 64}, {32, 32, 8192, 64}, {64, 40, 4096, 128}})
    add_attention(c, "large", s, f16, true);
  for (DType dt : {f16, bf16})
    for (int64_t d : {64, 128})
      for (bool causal : {false, true})
        for (int64_t s : {512, 1024, 2048, 4096, 8192, 16384})
          add_attention(c, "FlashAttention grid", {16384 / s, 2048 / d, s, d}, dt, causal);
  add_products(c, {1024, 4096, 8192});
  return c;
}

// ------------------------------------------------------------ the regions

// attention(q, k, v) over [B, H, S, D] (symbols b, h, s, d); a product
// [M, K] x [K, N] (symbols m, k, n), with `+ bias[N]` and relu. A dim of
// size 1 is kDimOne (a symbol stands for sizes other than 1: bind_symbols).
Region make_region(const Cell& c) {
  Region r;
  auto dim = [&](size_t i) { return c.shape[i] == 1 ? kDimOne : r.new_symbol(); };
  if (c.attention()) {
    const int b = dim(0), h = dim(1), s = dim(2), d = dim(3);
    const int q = r.add_tensor_input(c.dtype, {b, h, s, d});
    const int k = r.add_tensor_input(c.dtype, {b, h, s, d});
    const int v = r.add_tensor_input(c.dtype, {b, h, s, d});
    RegionAttrs at;
    at.causal = c.causal;
    const std::optional<int> o = r.add(OpId::Attention, {q, k, v}, at);
    if (!o) throw std::logic_error("attention does not fuse: " + c.id());
    r.outputs = {*o};
    return r;
  }
  const int m = dim(0), n = dim(1), k = dim(2);
  const int a = r.add_tensor_input(c.dtype, {m, k});
  const int w = r.add_tensor_input(c.dtype, {k, n});
  std::optional<int> o = r.add(OpId::MatMul, {a, w});
  if (o && c.kind == "matmul_bias_relu") {
    const int bias = r.add_tensor_input(c.dtype, {n});
    o = r.add(OpId::Add, {*o, bias});
    if (o) o = r.add(OpId::Relu, {*o});
  }
  if (!o) throw std::logic_error("the product does not fuse: " + c.id());
  r.outputs = {*o};
  return r;
}

// A tensor filled with scale * sin(0.37 i + phase) over a period of 4093
// elements, repeated (filling gigabytes element by element would take long).
Value wave(DType dt, Shape shape, double scale, double phase) {
  Value v = make_tensor(dt, shape, false);
  TensorObj& t = *v.as_tensor();
  constexpr int64_t kPeriod = 4093;
  const int64_t head = std::min(t.numel, kPeriod);
  for (int64_t i = 0; i < head; ++i) t.set_f(i, scale * std::sin(0.37 * static_cast<double>(i) + phase));
  const size_t esize = dtype_size(dt);
  char* bytes = static_cast<char*>(t.data());
  for (int64_t done = head; done < t.numel;) {
    const int64_t n = std::min(done, t.numel - done);
    std::memcpy(bytes + static_cast<size_t>(done) * esize, bytes, static_cast<size_t>(n) * esize);
    done += n;
  }
  return v;
}

std::vector<Value> make_inputs(const Cell& c) {
  if (c.attention()) {
    const Shape s(c.shape.begin(), c.shape.end());
    return {wave(c.dtype, s, 1.0, 0.1), wave(c.dtype, s, 1.0, 0.4), wave(c.dtype, s, 1.0, 0.7)};
  }
  const int64_t m = c.shape[0], n = c.shape[1], k = c.shape[2];
  std::vector<Value> in = {wave(c.dtype, {m, k}, 1.0, 0.1),
                           wave(c.dtype, {k, n}, 1.0 / std::sqrt(static_cast<double>(k)), 0.7)};
  if (c.kind == "matmul_bias_relu") in.push_back(wave(c.dtype, {n}, 0.25, 0.3));
  return in;
}

// Elements [offset, offset + count) of t, as a tensor of `shape`.
Value slice(const Value& t, int64_t offset, Shape shape) {
  Value out = make_tensor(t.as_tensor()->dtype, shape, false);
  const TensorObj& from = *t.as_tensor();
  TensorObj& to = *out.as_tensor();
  const size_t esize = dtype_size(from.dtype);
  std::memcpy(to.data(), static_cast<const char*>(from.data()) + static_cast<size_t>(offset) * esize, to.nbytes());
  return out;
}

// The interpreter's output on a sample: chunks of the output (element
// offset, the reference's values), or a note saying why there is none.
struct Reference {
  std::vector<std::pair<int64_t, Value>> chunks;
  std::string what;  // "heads (0,0) and (1,7) of 16", or why it was skipped
  bool skipped = false;
};

Reference reference(const Cell& c, const std::vector<Value>& in, double max_flops) {
  Reference ref;
  if (c.attention()) {
    const int64_t b = c.shape[0], h = c.shape[1], s = c.shape[2], d = c.shape[3];
    std::vector<int64_t> heads = {0};
    if (b * h > 1) heads.push_back(b * h - 1);
    const double per_head = c.flops() / static_cast<double>(b * h);
    while (!heads.empty() && per_head * static_cast<double>(heads.size()) > max_flops) heads.pop_back();
    if (heads.empty()) {
      ref.skipped = true;
      ref.what = fmt::format("skipped: one head is {:.1f} GFLOP on the host, over the limit of {:.1f} (--ref-gflops)",
                             per_head / 1e9, max_flops / 1e9);
      return ref;
    }
    Cell head = c;
    head.shape = {1, 1, s, d};
    std::vector<std::string> names;
    for (int64_t i : heads) {
      std::vector<Value> part;
      for (const Value& t : in) part.push_back(slice(t, i * s * d, {1, 1, s, d}));
      ref.chunks.emplace_back(i * s * d, run_region_reference(make_region(head), part).at(0));
      names.push_back(fmt::format("({},{})", i / h, i % h));
    }
    ref.what = fmt::format("heads {} of {}", fmt::join(names, " and "), b * h);
    return ref;
  }
  const int64_t m = c.shape[0], n = c.shape[1], k = c.shape[2];
  int64_t rows = std::min<int64_t>(m, 16);
  const double per_row = 2.0 * static_cast<double>(n) * static_cast<double>(k);
  while (rows > 0 && per_row * static_cast<double>(rows) > max_flops) --rows;
  if (rows == 0) {
    ref.skipped = true;
    ref.what = "skipped: a row is over the limit (--ref-gflops)";
    return ref;
  }
  const int64_t first = rows == m ? rows : rows / 2, last = rows - first;
  for (auto [row, count] : {std::pair<int64_t, int64_t>{0, first}, {m - last, last}}) {
    if (count == 0) continue;
    std::vector<Value> part = in;
    part[0] = slice(in[0], row * k, {count, k});
    Cell rows_cell = c;
    rows_cell.shape[0] = count;
    ref.chunks.emplace_back(row * n, run_region_reference(make_region(rows_cell), part).at(0));
  }
  ref.what = rows == m ? "every row" : fmt::format("rows 0-{} and {}-{} of {}", first - 1, m - last, m - 1, m);
  return ref;
}

struct Errors {
  double max_abs = 0, max_rel = 0;  // rel: |got - want| / (1 + |want|), docs/gpu.md's measure
};

Errors compare(const Value& out, const Reference& ref) {
  Errors e;
  const TensorObj& got = *out.as_tensor();
  for (const auto& [offset, want_v] : ref.chunks) {
    const TensorObj& want = *want_v.as_tensor();
    for (int64_t i = 0; i < want.numel; ++i) {
      const double g = got.get_f(offset + i), w = want.get_f(i);
      const double abs = std::isfinite(g) ? std::fabs(g - w) : std::numeric_limits<double>::infinity();
      e.max_abs = std::max(e.max_abs, abs);
      e.max_rel = std::max(e.max_rel, abs / (1 + std::fabs(w)));
    }
  }
  return e;
}

// ------------------------------------------------------------ measuring

struct Options {
  std::string profile = "quick";
  std::vector<std::string> cells;
  std::string json_path;
  bool list = false, emulation = false;
  int warmup = 10, iters = 100;
  double cell_budget_s = 10;  // the timed loop of one tier of one cell, at most (then fewer iterations)
  double budget_s = 0;        // the whole run; cells not started by then are skipped (0: none)
  int max_variants = 0;       // K3 variants tried at most (0: all the target offers)
  int jobs = 0;               // parallel compiles (0: the cores, at most 8)
  double ref_gflops = 20;     // the host reference's work per cell, at most
  std::string commit;
};

struct Stats {
  std::vector<double> samples;  // ms per launch
  int warmup = 0, launches_per_sample = 1;
  double median = 0, lo = 0, hi = 0;
  json to_json() const {
    double mean = 0;
    for (double s : samples) mean += s;
    mean /= static_cast<double>(samples.size());
    return {{"median_ms", median},
            {"ci95_ms", {lo, hi}},
            {"mean_ms", mean},
            {"min_ms", *std::min_element(samples.begin(), samples.end())},
            {"max_ms", *std::max_element(samples.begin(), samples.end())},
            {"samples", samples.size()},
            {"launches_per_sample", launches_per_sample},
            {"warmup", warmup}};
  }
};

// The median and the distribution-free 95% confidence interval of it: the
// order statistics n/2 -+ 1.96 sqrt(n)/2 (the binomial's normal approximation).
void summarize(Stats& s) {
  std::vector<double> x = s.samples;
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  s.median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
  const double half = 1.96 * std::sqrt(static_cast<double>(n)) / 2;
  const auto at = [&](double rank) {
    return x[static_cast<size_t>(std::clamp(rank, 0.0, static_cast<double>(n - 1)))];
  };
  s.lo = at(std::floor(static_cast<double>(n) / 2 - half) - 1);
  s.hi = at(std::ceil(static_cast<double>(n) / 2 + half));
}

// The target could not run the call (launch's nullopt): the reason.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Bench {
 public:
  Bench(GpuTarget& gpu, const Options& o) : gpu_(gpu), o_(o) {}

  // One launch; the output (whose elements stay on the device until read).
  Value launch(const Region& r, const TargetKernel& k, const std::vector<Value>& in, const std::vector<int64_t>& sym) {
    std::string why;
    std::optional<Value> out = gpu_.launch(r, k, in, sym, nullptr, why);
    if (!out) throw Refused(why);
    return *out;
  }
  // Milliseconds per launch of `n` launches between the device's timer.
  double time(const Region& r, const TargetKernel& k, const std::vector<Value>& in, const std::vector<int64_t>& sym,
              int n) {
    return gpu_.backend().time_ms([&] {
             for (int i = 0; i < n; ++i) launch(r, k, in, sym);
           }) / n;
  }
  // The protocol: warm-up, then samples (fewer where they would take over
  // the cell's budget, at least 5 after 1 warm-up launch).
  Stats measure(const Region& r, const TargetKernel& k, const std::vector<Value>& in, const std::vector<int64_t>& sym,
                double estimate_ms) {
    Stats s;
    const double budget_ms = o_.cell_budget_s * 1000;
    // Launches short enough to be hard to time one by one are timed in groups of ~0.1 ms.
    s.launches_per_sample = static_cast<int>(std::clamp(std::ceil(0.1 / std::max(estimate_ms, 1e-6)), 1.0, 32.0));
    const double per_sample = estimate_ms * s.launches_per_sample;
    int iters = o_.iters;
    s.warmup = o_.warmup;
    if (per_sample * (o_.iters + o_.warmup) > budget_ms) {
      iters = std::max(5, static_cast<int>(budget_ms / per_sample * 0.9));
      s.warmup = std::clamp(iters / 10, 1, o_.warmup);
      iters = std::min(iters, o_.iters);
    }
    for (int i = 0; i < s.warmup; ++i) launch(r, k, in, sym);
    for (int i = 0; i < iters; ++i) s.samples.push_back(time(r, k, in, sym, s.launches_per_sample));
    summarize(s);
    return s;
  }

  // Compiles each variant (in parallel); nullptr and the reason where one fails.
  std::vector<std::pair<std::shared_ptr<const TargetKernel>, std::string>> compile_all(
      const Region& r, const DimSpec& spec, const std::vector<KernelVariant>& vs) {
    std::vector<std::pair<std::shared_ptr<const TargetKernel>, std::string>> out(vs.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < vs.size();) {
        try {
          out[i].first = gpu_.compile(r, spec, vs[i]);
        } catch (const std::exception& e) {
          out[i].second = e.what();
        }
      }
    };
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t jobs = std::min<size_t>(vs.size(), o_.jobs > 0 ? static_cast<size_t>(o_.jobs) : std::min(cores, 8u));
    std::vector<std::thread> threads;
    for (size_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
    return out;
  }

  // Both tiers of a cell: two results.
  std::vector<json> run(const Cell& c) {
    json base = c.to_json();
    base["cell"] = c.id();
    base.erase("id");
    std::vector<json> out;
    auto result = [&](const char* tier, const std::string& status, const std::string& reason) {
      json j = base;
      j["tier"] = tier;
      j["status"] = status;
      if (!reason.empty()) j["reason"] = reason.substr(0, 600);
      return j;
    };
    const Region r = make_region(c);
    if (const std::string why = gpu_.refuses(r); !why.empty())
      return {result("K2", "refused", why), result("K3", "refused", why)};
    const std::vector<Value> in = make_inputs(c);
    const std::optional<std::vector<int64_t>> bound = bind_symbols(r, in);
    if (!bound) throw std::logic_error("the inputs do not fit the region: " + c.id());
    const std::vector<int64_t>& sym = *bound;
    Reference ref;
    bool have_ref = false;
    auto check = [&](json& j, const Value& output) {
      if (!have_ref) {
        ref = reference(c, in, o_.ref_gflops * 1e9);
        have_ref = true;
      }
      j["reference"] = ref.what;
      const double tol = c.dtype == DType::F32 ? 1e-5 : 1e-2;  // docs/gpu.md's tolerances
      j["tolerance"] = tol;
      if (ref.skipped) return;
      const Errors e = compare(output, ref);
      j["max_abs_err"] = e.max_abs;
      j["max_rel_err"] = e.max_rel;
      j["within_tolerance"] = e.max_rel <= tol;
    };
    auto fill = [&](json& j, const Stats& s) {
      j["stats"] = s.to_json();
      const double f = c.flops();
      j["tflops"] = f / (s.median * 1e-3) / 1e12;
      j["tflops_ci95"] = {f / (s.hi * 1e-3) / 1e12, f / (s.lo * 1e-3) / 1e12};
    };

    // K2: every dim a parameter.
    double k2_ms = 0;
    {
      json j = result("K2", "ok", "");
      try {
        const auto t0 = Clock::now();
        std::shared_ptr<const TargetKernel> k2 = gpu_.compile(r, {}, KernelVariant{});
        j["compile_ms"] = seconds_since(t0) * 1000;
        j["variant"] = k2->variant.str();
        const Value first = launch(r, *k2, in, sym);  // uploads the inputs, loads the module
        k2_ms = time(r, *k2, in, sym, 1);
        const Stats s = measure(r, *k2, in, sym, k2_ms);
        fill(j, s);
        k2_ms = s.median;
        check(j, first);
      } catch (const Refused& e) {
        j = result("K2", "refused", e.what());
      } catch (const std::exception& e) {
        j = result("K2", "error", e.what());
      }
      out.push_back(j);
    }
    if (out[0]["status"] == "refused") {
      out.push_back(result("K3", "refused", "K2 was refused: " + out[0]["reason"].get<std::string>()));
      return out;
    }

    // K3: the dims constant, each variant the target offers (a subset
    // spread over its list where --max-variants or the budget asks).
    json j = result("K3", "ok", "");
    try {
      const DimSpec spec(sym.begin(), sym.end());
      std::vector<KernelVariant> vs = gpu_.variants(r, spec, sym);
      j["variants_available"] = vs.size();
      size_t keep = vs.size();
      if (o_.max_variants > 0) keep = std::min(keep, static_cast<size_t>(o_.max_variants));
      // Two launches each while tuning should stay within the cell's budget.
      if (k2_ms > 0)
        keep = std::min(keep, std::max<size_t>(2, static_cast<size_t>(o_.cell_budget_s * 1000 / (4 * k2_ms))));
      if (keep < vs.size()) {
        std::vector<KernelVariant> spread;
        for (size_t i = 0; i < keep; ++i)
          spread.push_back(vs[keep == 1 ? 0 : i * (vs.size() - 1) / (keep - 1)]);
        vs = spread;
      }
      const auto t0 = Clock::now();
      const auto built = compile_all(r, spec, vs);
      j["compile_ms"] = seconds_since(t0) * 1000;
      // Each variant: a launch that loads it, then the median of a few timed launches.
      const int tune_samples = std::clamp(
          static_cast<int>(o_.cell_budget_s * 500 / std::max(1e-3, k2_ms * static_cast<double>(vs.size()))) - 1, 1, 5);
      std::optional<size_t> best;
      double best_ms = 0;
      std::vector<std::string> failures;
      json tried = json::array();
      for (size_t i = 0; i < vs.size(); ++i) {
        if (!built[i].first) {
          failures.push_back(vs[i].str() + ": " + built[i].second);
          continue;
        }
        try {
          launch(r, *built[i].first, in, sym);
          std::vector<double> t;
          for (int n = 0; n < tune_samples; ++n) t.push_back(time(r, *built[i].first, in, sym, 1));
          std::sort(t.begin(), t.end());
          const double ms = t[t.size() / 2];
          tried.push_back({{"variant", vs[i].str()}, {"ms", ms}});
          if (!best || ms < best_ms) best = i, best_ms = ms;
        } catch (const std::exception& e) {
          failures.push_back(vs[i].str() + ": " + e.what());
        }
      }
      j["variants_tried"] = tried;
      if (!failures.empty()) j["variant_failures"] = failures;
      if (!best) {
        const bool refused = !failures.empty();
        j = result("K3", refused ? "refused" : "error", failures.empty() ? "no variant" : failures.front());
      } else {
        const TargetKernel& k3 = *built[*best].first;
        j["variant"] = vs[*best].str();
        const Value first = launch(r, k3, in, sym);
        fill(j, measure(r, k3, in, sym, best_ms));
        check(j, first);
      }
    } catch (const Refused& e) {
      j = result("K3", "refused", e.what());
    } catch (const std::exception& e) {
      j = result("K3", "error", e.what());
    }
    out.push_back(j);
    return out;
  }

 private:
  GpuTarget& gpu_;
  const Options& o_;
};

// ------------------------------------------------------------ the run

std::string machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string model = "unknown CPU";
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return fmt::format("{} ({}, {} CPUs)", host, model, std::thread::hardware_concurrency());
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void usage(std::ostream& out) {
  out << "usage: attention_bench [--profile quick|full|emulation] [CELL ...] [--list] [--json FILE]\n"
         "         [--emulation] [--warmup N] [--iters N] [--cell-budget-s S] [--budget-s S]\n"
         "         [--max-variants N] [--jobs N] [--ref-gflops G] [--commit TEXT]\n"
         "  CELL: attention/BxHxSxD/f16|bf16|f32/causal|full, matmul/MxNxK/DTYPE, matmul_bias_relu/MxNxK/DTYPE\n"
         "  (cells given replace the profile's list)\n";
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--profile") o.profile = value();
    else if (a == "--json") o.json_path = value();
    else if (a == "--list") o.list = true;
    else if (a == "--emulation") o.emulation = true;
    else if (a == "--warmup") o.warmup = std::max(0, std::stoi(value()));
    else if (a == "--iters") o.iters = std::max(1, std::stoi(value()));
    else if (a == "--cell-budget-s") o.cell_budget_s = std::stod(value());
    else if (a == "--budget-s") o.budget_s = std::stod(value());
    else if (a == "--max-variants") o.max_variants = std::stoi(value());
    else if (a == "--jobs") o.jobs = std::stoi(value());
    else if (a == "--ref-gflops") o.ref_gflops = std::stod(value());
    else if (a == "--commit") o.commit = value();
    else if (a == "--help" || a == "-h") {
      usage(std::cout);
      std::exit(0);
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown option " + a);
    } else {
      o.cells.push_back(a);
    }
  }
  return o;
}

void emit(const Options& o, const json& doc) {
  const std::string text = doc.dump(1) + "\n";
  if (o.json_path.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream f(o.json_path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + o.json_path);
}

int run(const Options& o) {
  std::vector<Cell> cells;
  if (o.cells.empty()) cells = profile_cells(o.profile);
  for (const std::string& text : o.cells) add_cell(cells, parse_cell(text));
  json doc = {{"bench", "attention_bench"}, {"profile", o.cells.empty() ? o.profile : "cells"}};
  if (o.list) {
    json list = json::array();
    for (const Cell& c : cells) list.push_back(c.to_json());
    doc["cells"] = list;
    emit(o, doc);
    return 0;
  }
  const char* env_commit = std::getenv("TESSERA_COMMIT");
  const std::string commit = !o.commit.empty() ? o.commit : env_commit ? env_commit : "unknown";
  doc["machine"] = machine();
  doc["commit"] = commit;
  doc["date"] = today();
  doc["protocol"] = {{"warmup", o.warmup}, {"iters", o.iters}, {"cell_budget_s", o.cell_budget_s},
                     {"budget_s", o.budget_s}, {"max_variants", o.max_variants}};

  // The device: the emulation when asked; else the GPU select_device finds
  // (or its emulation under TESSERA_GPU_EMULATION=1 where there is none).
  std::shared_ptr<device::DeviceBackend> backend;
  bool emulated = o.emulation;
  try {
    if (!emulated) {
      const device::DeviceSelection sel = device::select_device(device::DeviceChoice::Gpu);
      emulated = sel.emulated;
      if (!emulated) backend = std::make_shared<device::CudaBackend>(sel);
    }
    if (emulated) backend = std::make_shared<device::EmulatedBackend>();
  } catch (const std::exception& e) {
    std::cerr << "attention_bench: " << e.what() << "\n";
    doc["skipped"] = e.what();
    doc["results"] = json::array();
    emit(o, doc);
    return 0;
  }
  doc["device"] = backend->describe();
  doc["arch"] = backend->arch();
  doc["compiler"] = backend->compiler();
  doc["emulation"] = emulated;
  std::cerr << "attention_bench: " << cells.size() << " cells on " << backend->describe() << "\n";

  KernelStore store;  // no persistent cache: every kernel compiled in this run
  auto gpu = std::make_shared<GpuTarget>(backend, store, GpuTarget::Options{});
  Bench bench(*gpu, o);
  json results = json::array();
  const auto start = Clock::now();
  for (const Cell& c : cells) {
    std::vector<json> rs;
    if (o.budget_s > 0 && seconds_since(start) > o.budget_s) {
      json j = c.to_json();
      j["cell"] = c.id();
      j.erase("id");
      j["status"] = "skipped";
      j["reason"] = fmt::format("the run's time budget of {:g} s was spent (--budget-s)", o.budget_s);
      for (const char* tier : {"K2", "K3"}) {
        j["tier"] = tier;
        rs.push_back(j);
      }
    } else {
      const auto t0 = Clock::now();
      rs = bench.run(c);
      std::cerr << fmt::format("  {:<44} {:5.1f} s", c.id(), seconds_since(t0));
      for (const json& j : rs) {
        std::cerr << "  " << j["tier"].get<std::string>() << " ";
        if (j.contains("tflops")) std::cerr << fmt::format("{:.3f} ms", j["stats"]["median_ms"].get<double>());
        else std::cerr << j["status"].get<std::string>();
      }
      std::cerr << "\n";
    }
    for (json& j : rs) {
      j["machine"] = doc["machine"];
      j["device"] = doc["device"];
      j["commit"] = commit;
      results.push_back(std::move(j));
    }
  }
  doc["results"] = results;
  doc["seconds"] = seconds_since(start);
  emit(o, doc);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::invalid_argument& e) {
    std::cerr << "attention_bench: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attention_bench: " << e.what() << "\n";
    return 1;
  }
}
