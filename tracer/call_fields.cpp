#include "tracer/call_fields.h"

#include <type_traits>
#include <utility>

namespace tessera::jit {

CallFields call_fields(const CallTarget& c) {
  return std::visit(
      [](const auto& k) {
        using T = std::decay_t<decltype(k)>;
        CallFields f;
        if constexpr (std::is_same_v<T, call::Builtin>) f.ptr = k.def;
        if constexpr (std::is_same_v<T, call::Arith> || std::is_same_v<T, call::Compare>)
          f.sub = static_cast<uint8_t>(k.op);
        if constexpr (std::is_same_v<T, call::IndexGet> || std::is_same_v<T, call::IndexSet>) f.sub = k.nidx;
        if constexpr (std::is_same_v<T, call::BuiltinKw>) f = CallFields{k.nkw, k.def, k.names, k.kw};
        return f;
      },
      c.what);
}

std::variant<CallTarget::What, const char*> make_call(CallTarget::Kind kind, CallFields f) {
  using K = CallTarget::Kind;
  const bool builtin = kind == K::Builtin || kind == K::BuiltinKw;
  const bool has_sub = kind == K::Arith || kind == K::Compare || kind == K::IndexGet || kind == K::IndexSet ||
                       kind == K::BuiltinKw;
  if (f.sub != 0 && !has_sub) return "sub-code";
  if (f.ptr && !builtin) return "pointer";
  if (f.aux && kind != K::BuiltinKw) return "aux=";
  if (!f.kw.empty() && kind != K::BuiltinKw) return "kw=";
  const auto* def = static_cast<const BuiltinDef*>(f.ptr);
  switch (kind) {
    case K::Builtin: return CallTarget::What{call::Builtin{def}};
    case K::Arith: return CallTarget::What{call::Arith{static_cast<BinOp>(f.sub)}};
    case K::Compare: return CallTarget::What{call::Compare{static_cast<CmpOp>(f.sub)}};
    case K::IndexGet: return CallTarget::What{call::IndexGet{f.sub}};
    case K::IndexSet: return CallTarget::What{call::IndexSet{f.sub}};
    case K::BuiltinKw: return CallTarget::What{call::BuiltinKw{def, f.sub, f.aux, std::move(f.kw)}};
    case K::NewList: return CallTarget::What{call::NewList{}};
    case K::Negate: return CallTarget::What{call::Negate{}};
    case K::ListExtend: return CallTarget::What{call::ListExtend{}};
    case K::Kernel: return CallTarget::What{call::Kernel{}};
  }
  return "kind";
}

}  // namespace tessera::jit
