#include "vm/core/nvtx_ranges.h"

#include <array>

#ifndef TESSERA_NO_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace tessera::nvtx {

namespace {

struct PhaseRow {
  const char* name;
  uint32_t argb;
};

constexpr std::array kPhases = {
#define TESSERA_NVTX_PHASE(e, name, color) PhaseRow{name, color},
#include "vm/core/nvtx_phases.def"
#undef TESSERA_NVTX_PHASE
};

#ifndef TESSERA_NO_NVTX
// Set once by attach() (a thread-safe static's initializer), read-only after.
nvtxDomainHandle_t domain = nullptr;
std::array<nvtxStringHandle_t, kPhases.size()> phase_strings{};

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}
#endif

}  // namespace

std::string_view phase_name(Phase p) { return kPhases[static_cast<size_t>(p)].name; }

#ifndef TESSERA_NO_NVTX
namespace detail {

bool attach() {
  // Without a tool NVTX returns no domain, having loaded nothing.
  domain = nvtxDomainCreateA("Tessera");
  if (!domain) return false;
  // Registered once, so that a phase's push passes a handle, not a text.
  for (size_t i = 0; i < kPhases.size(); ++i) phase_strings[i] = nvtxDomainRegisterStringA(domain, kPhases[i].name);
  return true;
}

void push(Phase p) {
  const size_t i = static_cast<size_t>(p);
  nvtxEventAttributes_t a = attributes();
  a.colorType = NVTX_COLOR_ARGB;
  a.color = kPhases[i].argb;
  // A tool that registers no strings still gets the text.
  if (phase_strings[i]) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = phase_strings[i];
  } else {
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = kPhases[i].name;
  }
  nvtxDomainRangePushEx(domain, &a);
}

void push(const std::string& name) {
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name.c_str();
  nvtxDomainRangePushEx(domain, &a);
}

void pop() { nvtxDomainRangePop(domain); }

}  // namespace detail
#else
namespace detail {
bool attach() { return false; }
void push(Phase) {}
void push(const std::string&) {}
void pop() {}
}  // namespace detail
#endif

}  // namespace tessera::nvtx
