// Value: tags, reference counting, and iterative freeing of nested lists.
#include <gtest/gtest.h>

#include "vm/core/value.h"

namespace tessera {
namespace {

TEST(Value, ScalarsAreInlineAndSixteenBytes) {
  static_assert(sizeof(Value) == 16);
  EXPECT_TRUE(Value().is_nil());
  EXPECT_EQ(Value::integer(-5).as_int(), -5);
  EXPECT_EQ(Value::number(2.5).as_float(), 2.5);
  EXPECT_TRUE(Value::boolean(true).as_bool());
  EXPECT_STREQ(type_name(Value::integer(1)), "int");
  EXPECT_STREQ(type_name(Value::dtype(DType::BF16)), "dtype");
  EXPECT_STREQ(dtype_name(DType::BF16), "bf16");
}

TEST(Value, CopiesShareObjectsAndCountReferences) {
  Value s = make_str("hello");
  EXPECT_EQ(s.as_obj()->refcount, 1u);
  {
    Value t = s;
    EXPECT_EQ(s.as_obj()->refcount, 2u);
    Value u = std::move(t);
    EXPECT_TRUE(t.is_nil());
    EXPECT_EQ(s.as_obj()->refcount, 2u);
  }
  EXPECT_EQ(s.as_obj()->refcount, 1u);
  EXPECT_EQ(s.as_str()->view(), "hello");
}

TEST(Value, BorrowAddsAReference) {
  Value l = make_list({Value::integer(1)});
  Value b = Value::borrow(l.as_obj());
  EXPECT_EQ(l.as_obj()->refcount, 2u);
  EXPECT_TRUE(b.is_list());
}

TEST(Value, DeeplyNestedListsFreeWithoutRecursion) {
  // A million levels would overflow the C++ stack if freeing recursed.
  // The innermost list is held from outside too: once the chain is gone,
  // only that reference is left, which shows every level was freed.
  Value inner = make_list();
  Value l = make_list({inner});
  EXPECT_EQ(inner.as_obj()->refcount, 2u);
  for (int i = 0; i < 1000000; ++i) l = make_list({l});
  l = Value();
  EXPECT_EQ(inner.as_obj()->refcount, 1u);
  EXPECT_TRUE(inner.as_list()->items.empty());
}

TEST(Value, LayoutConstantsMatchTheObjectLayout) {
  Value v = Value::integer(0x1122334455667788);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&v);
  EXPECT_EQ(bytes[Value::kTagOffset], static_cast<unsigned char>(Tag::Int));
  int64_t payload;
  std::memcpy(&payload, bytes + Value::kPayloadOffset, 8);
  EXPECT_EQ(payload, 0x1122334455667788);
}

}  // namespace
}  // namespace tessera
