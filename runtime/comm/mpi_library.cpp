#include "runtime/comm/mpi_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace tessera::comm {

namespace {

std::vector<std::string> default_candidates() {
  if (const char* env = std::getenv("TESSERA_MPI_LIBRARY"); env && *env) return {env};
  return {"libmpi.so.40", "libmpi.so"};
}

}  // namespace

MpiLibrary::~MpiLibrary() = default;

const MpiLibrary& MpiLibrary::get() {
  static const MpiLibrary* library = new MpiLibrary(default_candidates());
  return *library;
}

MpiLibrary::MpiLibrary(const std::vector<std::string>& candidates) {
  if (!open_kept(candidates, "libmpi.so",
                 "install Open MPI (Debian: openmpi-bin libopenmpi-dev) or set TESSERA_MPI_LIBRARY", /*global=*/true))
    return;
  static constexpr EntryPoint<Api> kRows[] = {
#define MPI_FN(name, ret, params) {#name, [](Api& a, void* fn) { a.name = reinterpret_cast<decltype(a.name)>(fn); }},
#include "runtime/comm/mpi_api.def"
#undef MPI_FN
  };
  if (!resolve(kRows, api_, "it is not an MPI 3 library")) return;
  // The predefined handles of Open MPI's ABI, as the process resolves them:
  // a host executable that links MPI itself holds copies of these objects
  // (copy relocations) that libmpi's own code then uses, and only the
  // process's global scope (the executable first) finds those; libmpi's
  // definitions where nothing else has them.
  struct Handle {
    const char* symbol;
    void** slot;
  };
  const Handle handles[] = {{"ompi_mpi_comm_world", &comm_world}, {"ompi_mpi_float", &type_float},
                            {"ompi_mpi_int32_t", &type_int32},    {"ompi_mpi_int64_t", &type_int64},
                            {"ompi_mpi_uint8_t", &type_uint8},    {"ompi_mpi_byte", &type_byte},
                            {"ompi_mpi_op_sum", &op_sum},         {"ompi_mpi_op_prod", &op_prod},
                            {"ompi_mpi_op_max", &op_max},         {"ompi_mpi_op_min", &op_min},
                            {"ompi_mpi_errors_return", &errors_return}};
  for (const Handle& h : handles) {
    *h.slot = dlsym(RTLD_DEFAULT, h.symbol);
    if (!*h.slot) *h.slot = lib_.symbol(h.symbol);
    if (!*h.slot) {
      why_ = fmt::format("{} has no {}: Tessera speaks Open MPI's ABI, and this is another MPI", lib_.path(), h.symbol);
      return;
    }
  }
  available_ = true;
}

std::string MpiLibrary::version() const {
  char text[8192] = {};  // larger than any MPI_MAX_LIBRARY_VERSION_STRING
  int len = 0;
  if (!available_ || api_.MPI_Get_library_version(text, &len) != kMpiSuccess) return "MPI";
  std::string v(text, static_cast<size_t>(std::max(len, 0)));
  if (size_t comma = v.find(','); comma != std::string::npos) v.resize(comma);
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ' || v.back() == '\0')) v.pop_back();
  return v;
}

std::string MpiLibrary::error_text(int code) const {
  char text[1024] = {};
  int len = 0;
  if (available_ && api_.MPI_Error_string(code, text, &len) == kMpiSuccess && len > 0)
    return std::string(text, static_cast<size_t>(len));
  return fmt::format("MPI error {}", code);
}

void MpiLibrary::check(int code, const char* what) const {
  if (code != kMpiSuccess) throw std::runtime_error(fmt::format("{}: {}", what, error_text(code)));
}

}  // namespace tessera::comm
