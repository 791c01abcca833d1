// MpiLibrary: Open MPI's libmpi, loaded with dlopen like the CUDA libraries
// (nothing links it, so a script run without mpirun needs no MPI
// installed). The entry points are the rows of mpi_api.def; the predefined
// handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are, in Open MPI's ABI,
// the addresses of global objects of the library, so they are looked up by
// their symbols' names too (ompi_mpi_comm_world, ompi_mpi_float, ...).
//
// libmpi is opened RTLD_GLOBAL: Open MPI's own plugins (its MCA components)
// resolve their symbols against it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/device/dynamic_library.h"

namespace tessera::comm {

// Open MPI's handle types: pointers to the library's objects.
using MpiComm = void*;
using MpiDatatype = void*;
using MpiOp = void*;
using MpiRequest = void*;
using MpiErrhandler = void*;

constexpr int kMpiSuccess = 0;
constexpr int kMpiThreadSerialized = 2;  // Open MPI's MPI_THREAD_SERIALIZED

class MpiLibrary : public device::OptionalLibrary {
 public:
  // The process's libmpi ($TESSERA_MPI_LIBRARY, else libmpi.so.40,
  // libmpi.so); loaded on first call, never unloaded.
  static const MpiLibrary& get();
  explicit MpiLibrary(const std::vector<std::string>& candidates);
  ~MpiLibrary();

  struct Api {
#define MPI_FN(name, ret, params) ret(*name) params = nullptr;
#include "runtime/comm/mpi_api.def"
#undef MPI_FN
  };
  const Api& api() const { return api_; }

  // Predefined handles.
  MpiComm comm_world = nullptr;
  MpiDatatype type_float = nullptr, type_int32 = nullptr, type_int64 = nullptr, type_uint8 = nullptr,
              type_byte = nullptr;
  MpiOp op_sum = nullptr, op_prod = nullptr, op_max = nullptr, op_min = nullptr;
  MpiErrhandler errors_return = nullptr;

  // "Open MPI v4.1.4" (MPI_Get_library_version up to its first comma).
  std::string version() const;
  // MPI_Error_string's text for an error code.
  std::string error_text(int code) const;
  // Throws std::runtime_error "WHAT: TEXT" unless `code` is MPI_SUCCESS.
  void check(int code, const char* what) const;

 private:
  Api api_;
};

}  // namespace tessera::comm
