#include "tracer/constant_description.h"

#include <cstdio>

#include "vm/bytecode/bytecode.h"
#include "vm/core/builtin_def.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

namespace {

// Double quotes, `"` and `\` escaped, other bytes outside printable ASCII as
// \xNN (the description is one line of the IR's text form).
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == kConstDescriptionMaxChars) return out + "\"...";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::string describe_constant(const Value& v) {
  switch (v.tag()) {
    case Tag::Func: return "fn " + v.as_func()->name;
    case Tag::Builtin: return std::string("built-in ") + v.as_builtin()->name;
    case Tag::Str: return quoted(v.as_str()->view());
    case Tag::List: return "a list";
    case Tag::Tensor: {
      const TensorObj& t = *v.as_tensor();
      std::string s = std::string("a tensor ") + dtype_name(t.dtype) + "[";
      for (size_t d = 0; d < t.shape.size(); ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
      return s + "]";
    }
    default: return {};
  }
}

}  // namespace tessera::jit
