#include "runtime/kernels/gemm_epilogue.h"

#include <algorithm>

namespace tessera::kernels {

namespace {

GemmEpiloguePlan none(std::string why) {
  GemmEpiloguePlan p;
  p.why_not = std::move(why);
  return p;
}

bool half_or_f32(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

}  // namespace

GemmEpiloguePlan plan_gemm_epilogue(const Region& r) {
  if (!r.leading_step() || r.ops.front().op != OpId::MatMul) return none("the region does not start with a matrix product");
  const RegionOp& mm = r.ops.front();
  const RegionType &a = r.type(mm.args[0]), &b = r.type(mm.args[1]);
  if (a.dims.size() < 2 || b.dims.size() < 2) return none("a product of a vector (cuBLASLt's products are of matrices)");
  if (a.dtype != b.dtype || a.dtype != mm.type.dtype || !half_or_f32(mm.type.dtype))
    return none(std::string("a product of ") + dtype_name(a.dtype) + " by " + dtype_name(b.dtype) +
                " (cuBLASLt takes both operands in the result's type)");
  if (r.ops.size() == 1) return none("nothing follows the product");
  if (r.ops.size() > 3) return none("more than a bias and a relu follow the product");
  const int product = r.value_of_op(0);

  const RegionOp& add = r.ops[1];
  if (add.op != OpId::Add) return none(std::string("the product is followed by ") + op_def(add.op).name + ", not + bias");
  // Addition is commutative in IEEE arithmetic: bias + product is as good.
  const int bias = add.args[0] == product ? add.args[1] : add.args[0];
  if ((add.args[0] == product) == (add.args[1] == product)) return none("the sum does not add the product once");
  if (!r.is_input(bias)) return none("the bias is computed in the region (cuBLASLt reads it from memory)");
  const RegionType& bt = r.type(bias);
  if (!bt.tensor) return none("the bias is a scalar (cuBLASLt's bias is a vector)");
  if (bt.dtype != mm.type.dtype)
    return none(std::string("the bias is ") + dtype_name(bt.dtype) + ", the product " + dtype_name(mm.type.dtype) +
                " (cuBLASLt's bias has the result's type)");
  // Along the product's last dim, 1 on every other: n elements in memory.
  if (bt.dims.empty() || bt.dims.size() > mm.type.dims.size() || bt.dims.back() != mm.type.dims.back() ||
      !std::all_of(bt.dims.begin(), bt.dims.end() - 1, [](int d) { return d == kDimOne; }))
    return none("the bias is not a vector along the product's last dim (broadcast over its rows)");
  if (add.type != mm.type) return none("the sum's type is not the product's");

  GemmEpiloguePlan plan;
  plan.epilogue = device::GemmEpilogue::Bias;
  plan.bias_input = static_cast<size_t>(r.index_of(bias));
  int last = r.value_of_op(1);
  if (r.ops.size() == 3) {
    const RegionOp& act = r.ops[2];
    if (act.op == OpId::Gelu)
      return none("gelu is erf's in the interpreter; cuBLASLt's GELU epilogue is the tanh approximation");
    if (act.op != OpId::Relu || act.args.size() != 1 || act.args[0] != last)
      return none(std::string("the sum is followed by ") + op_def(act.op).name + ", which is no cuBLASLt epilogue");
    plan.epilogue = device::GemmEpilogue::ReluBias;
    last = r.value_of_op(2);
  }
  if (r.outputs != std::vector<int>{last})
    return none("the region writes more than its last value (cuBLASLt writes one result)");
  return plan;
}

}  // namespace tessera::kernels
