// How a tensor's elements travel in a collective (collectives.h): the
// element a transport reduces for each dtype (f16 and bf16 widened to f32,
// bool as bytes), the reduction a transport applies, and the conversions
// and avg's division on raw buffers, so that both the collectives and the
// all_reduce buckets' thread (which must not touch a pending tensor through
// TensorObj::data) use them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vm/graph/collectives.h"

namespace tessera::collective_elements {

// The element a transport moves for `dt`.
CommElem elem_of(DType dt);
size_t elem_bytes(CommElem e);
// Whether `dt` travels widened to f32 (f16, bf16).
bool widened(DType dt);
// The reduction the transport applies for `op` on `dt` (avg: sum; bool: max or min).
ReduceOp transport_op(DType dt, ReduceOp op);
// `n` elements of `dt` at `src` as the transport's elements at `dst` (a copy).
void widen(const void* src, DType dt, size_t n, void* dst);
// avg: the summed transport elements divided by `w` (integers floor-divided, as //).
void divide(void* p, CommElem e, size_t n, int w);
// `n` reduced transport elements at `src` written as `dt` to `dst` (f16 and bf16 rounded once).
void narrow(const void* src, DType dt, size_t n, void* dst);

}  // namespace tessera::collective_elements
