// A stand-in for an NVTX tool (what Nsight Systems injects), for the tests
// of vm/core/nvtx_ranges.h: NVTX loads it when NVTX_INJECTION64_PATH names
// it. It takes the domain calls the ranges make and writes one line per call
// to the file $TESSERA_NVTX_TEST_LOG (appended, one write(2) per line, so
// that lines of several threads do not mix and nothing waits in a buffer):
//   init                    NVTX called InitializeInjectionNvtx2
//   domain NAME             nvtxDomainCreateA
//   string NAME             nvtxDomainRegisterStringA
//   push TID NAME           nvtxDomainRangePushEx (a registered name resolved)
//   pop TID                 nvtxDomainRangePop
#define NVTX_NO_IMPL
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

int log_fd = -1;
struct Domain {
  std::string name;
};

void line(const std::string& text) {
  const std::string l = text + "\n";
  [[maybe_unused]] const ssize_t n = write(log_fd, l.data(), l.size());  // a lost line fails the test's counts
}

std::string tid() { return std::to_string(static_cast<long>(syscall(SYS_gettid))); }

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  line(std::string("domain ") + name);
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name});  // lives as long as the process
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  line(std::string("string ") + s);
  return reinterpret_cast<nvtxStringHandle_t>(new std::string(s));
}

int NVTX_API range_push(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  std::string name = "?";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) name = a->message.ascii;
  else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
    name = *reinterpret_cast<const std::string*>(a->message.registered);
  line("push " + tid() + " " + name);
  return 0;
}

int NVTX_API range_pop(nvtxDomainHandle_t) {
  line("pop " + tid());
  return 0;
}

template <class F>
void put(NvtxFunctionTable table, unsigned size, unsigned id, F f) {
  if (id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);  // slots 1..size
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const char* path = std::getenv("TESSERA_NVTX_TEST_LOG");
  if (!path) return 0;  // nowhere to write: NVTX unloads the tool, and its calls stay no-ops
  log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return 0;
  line("init");
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  put(table, size, NVTX_CBID_CORE2_DomainCreateA, domain_create);
  put(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, register_string);
  put(table, size, NVTX_CBID_CORE2_DomainRangePushEx, range_push);
  put(table, size, NVTX_CBID_CORE2_DomainRangePop, range_pop);
  return 1;
}
