#include "vm/tensor/broadcast.h"

#include "vm/core/error.h"

namespace tessera {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw RuntimeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                         " are incompatible");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape st(out.size(), 0);
  Shape cs = contiguous_strides(in);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : cs[i];
  return st;
}

}  // namespace tessera
