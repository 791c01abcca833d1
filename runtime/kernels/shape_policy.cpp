#include "runtime/kernels/shape_policy.h"

namespace tessera::kernels {

ShapePolicy::Decision ShapePolicy::observe(const std::vector<int64_t>& sym, bool busy, const DeviceMs& device_ms) {
  Decision d;
  const bool timed = device_ms && p_.hot_ms > 0;
  if (last_.empty() && !sym.empty()) {
    last_ = sym;
    changes_.assign(sym.size(), 0);
    dynamic_.assign(sym.size(), false);
    streak_ = 1;
  } else {
    bool settled = true;  // the non-dynamic symbols kept their values
    for (size_t s = 0; s < sym.size() && s < last_.size(); ++s) {
      if (sym[s] == last_[s]) continue;
      if (++changes_[s] >= kChangesToDynamic && !dynamic_[s]) {
        dynamic_[s] = true;
        d.now_dynamic.push_back(s);
      } else if (!dynamic_[s]) {
        settled = false;
      }
      last_[s] = sym[s];
    }
    streak_ = settled ? streak_ + 1 : 1;
  }
  if (streak_ == 1 && timed) streak_start_ms_ = device_ms();
  bool by_time = false;
  if (p_.specialize > 0 && streak_ < p_.specialize && streak_ >= p_.hot_calls && timed && streak_start_ms_ && !busy) {
    const std::optional<double> now = device_ms();
    by_time = now && *now - *streak_start_ms_ >= p_.hot_ms;
  }
  if (p_.specialize <= 0 || (streak_ < p_.specialize && !by_time) || busy) return d;
  bool any_static = false;
  for (bool dyn : dynamic_) any_static |= !dyn;
  if (!any_static) return d;  // every dim is dynamic (or there are none): K2 it is
  if (asked_ >= p_.recompiles) {
    if (!capped_) d.capped_now = capped_ = true;  // counted once
    return d;
  }
  DimSpec spec(sym.size());
  for (size_t s = 0; s < sym.size(); ++s)
    if (!dynamic_[s]) spec[s] = sym[s];
  d.recompile = asked_ > 0;
  d.by_time = by_time;
  ++asked_;
  streak_ = 0;
  d.ask = std::move(spec);
  return d;
}

}  // namespace tessera::kernels
