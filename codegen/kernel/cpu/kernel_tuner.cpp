#include "codegen/kernel/cpu/kernel_tuner.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/cpu/region_kernel.h"

namespace tessera::kir {

namespace {

// Inputs of the region's types at these symbols' values, every element 1
// (no denormals, NaNs or infinities to time instead of the kernel).
std::vector<Value> synthetic_inputs(const Region& r, const std::vector<int64_t>& sym) {
  std::vector<Value> in;
  for (const RegionType& t : r.inputs) {
    if (!t.tensor) {
      in.push_back(t.scalar == ScalarKind::Float ? Value::number(1.0)
                   : t.scalar == ScalarKind::Int ? Value::integer(1)
                                                 : Value::boolean(true));
      continue;
    }
    Shape shape;
    for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym.at(static_cast<size_t>(d)));
    Value v = make_tensor(t.dtype, std::move(shape), false);
    TensorObj* tv = v.as_tensor();
    const int64_t n = tv->numel;
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype) {
        case DType::F32: static_cast<float*>(tv->data)[i] = 1.0f; break;
        case DType::F16: static_cast<uint16_t*>(tv->data)[i] = 0x3C00; break;
        case DType::BF16: static_cast<uint16_t*>(tv->data)[i] = 0x3F80; break;
        case DType::I32: static_cast<int32_t*>(tv->data)[i] = 1; break;
        case DType::I64: static_cast<int64_t*>(tv->data)[i] = 1; break;
        case DType::Bool: static_cast<uint8_t*>(tv->data)[i] = 1; break;
      }
    }
    in.push_back(std::move(v));
  }
  return in;
}

// The best of several runs, in microseconds: at least 3, and at least 2 ms
// of runs in all (at most 50).
double time_us(const CpuRegionKernel& k, std::span<const Value> in, const std::vector<int64_t>& sym) {
  k.run_bound(in, sym);  // warm: page faults of the outputs, caches
  double best = 1e300, total = 0;
  for (int i = 0; i < 50 && (i < 3 || total < 2000); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    k.run_bound(in, sym);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, us);
    total += us;
  }
  return best;
}

std::string spec_str(const std::vector<std::optional<int64_t>>& spec) {
  std::string s;
  for (const auto& v : spec) s += v ? std::to_string(*v) + "," : "?,";
  return s;
}

}  // namespace

std::string TuneChoice::str() const {
  return "tile=" + std::to_string(tile) + " threads=" + std::to_string(threads) + " flat=" + (flat ? "1" : "0");
}

std::optional<TuneChoice> TuneChoice::parse(const std::string& s) {
  long long tile = 0;
  int threads = 0, flat = 0;
  if (std::sscanf(s.c_str(), "tile=%lld threads=%d flat=%d", &tile, &threads, &flat) != 3 || tile <= 0 ||
      tile > (1 << 20) || threads < kEveryCore || (flat != 0 && flat != 1))
    return std::nullopt;
  return TuneChoice{tile, threads, flat == 1};
}

std::vector<TuneChoice> tune_candidates(const Region& r, const std::vector<int64_t>& sym) {
  auto extent = [&](int d) { return d == kDimOne ? int64_t{1} : sym.at(static_cast<size_t>(d)); };
  if (r.has_row_ops()) {
    // A row kernel's layout is fixed (a program per row, the row as one
    // tile when it is short enough): only the thread split varies.
    const std::vector<int> row = r.row_dims();
    int64_t rows = 1;
    for (size_t j = 0; j + 1 < row.size() && !r.reduces_all_axes(); ++j) rows *= extent(row[j]);
    std::vector<TuneChoice> out = {TuneChoice{}};
    if (rows > 1) out.push_back(TuneChoice{1024, 1, false});
    return out;
  }
  const std::vector<int>& shape = r.type(r.outputs.at(0)).dims;
  int64_t total = 1;
  for (int d : shape) total *= extent(d);
  // lower_region's row-wise programs (rank >= 2): tiles of one row each.
  const bool rowwise = shape.size() >= 2 && shape.back() != kDimOne;
  const int64_t row = rowwise ? extent(shape.back()) : total;
  std::vector<TuneChoice> layouts;
  for (int64_t tile : {int64_t{1024}, int64_t{4096}}) layouts.push_back(TuneChoice{tile, 0, false});
  // A whole row per program (rounded up to 16 lanes), for rows of moderate length.
  const int64_t whole = (row + 15) / 16 * 16;
  if (rowwise && whole >= 16 && whole <= 16384 && whole != 1024 && whole != 4096)
    layouts.push_back(TuneChoice{whole, 0, false});
  // Short rows: tiles of the flattened output instead.
  if (rowwise && row < 1024)
    for (int64_t tile : {int64_t{1024}, int64_t{4096}}) layouts.push_back(TuneChoice{tile, 0, true});
  std::vector<TuneChoice> out = {TuneChoice{}};  // K2's
  for (const TuneChoice& l : layouts)
    for (int threads : {1, kEveryCore}) {
      const bool rows = rowwise && !l.flat;
      const int64_t programs = rows ? (row + l.tile - 1) / l.tile * (total / std::max<int64_t>(row, 1))
                                    : (total + l.tile - 1) / l.tile;
      if (threads == kEveryCore && programs <= 1) continue;  // the same as serial
      TuneChoice c{l.tile, threads, l.flat};
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  return out;
}

TuneOutcome tune_region(const Region& r, const std::vector<std::optional<int64_t>>& spec,
                        const std::vector<int64_t>& sym, KernelStore& store) {
  const std::string id = r.str() + "\nspec " + spec_str(spec);
  if (std::optional<std::string> note = store.load_note("tuning", id))
    if (std::optional<TuneChoice> c = TuneChoice::parse(*note)) return TuneOutcome{*c, {}};
  TuneOutcome out;
  const std::vector<Value> in = synthetic_inputs(r, sym);
  double best = 1e300;
  for (const TuneChoice& c : tune_candidates(r, sym)) {
    RegionLowering opt;
    opt.tile = c.tile;
    opt.flat = c.flat;
    opt.symbol_values = spec;
    Kernel k = lower_region(r, "region", opt);
    auto stored = store.get(std::move(k), r.str());
    CpuRegionKernel rk(r, stored->kernel, stored->fn, c.threads);
    const double us = time_us(rk, in, sym);
    out.timings_us.emplace_back(c, us);
    if (us < best) {
      best = us;
      out.best = c;
    }
  }
  store.store_note("tuning", id, out.best.str());
  return out;
}

}  // namespace tessera::kir
