/* tessera.h compiles as C99 under -Wall -Wextra -pedantic -Werror, alone and
 * beside dlpack.h (whose DLManagedTensor the header declares forward). */
#include <tessera/tessera.h>
#include <dlpack/dlpack.h>

int tessera_c99_header_check(void);

int tessera_c99_header_check(void) {
  tsr_vm_options opts;
  tsr_vm* vm = NULL;
  tsr_value v = {0};
  DLManagedTensor* exported = NULL;
  tsr_vm_options_init(&opts);
  if (tsr_vm_create(&opts, &vm) != TSR_SUCCESS) return 1;
  if (tsr_new_int(vm, 3, &v) != TSR_SUCCESS) return 2;
  (void)tsr_tensor_to_dlpack(vm, v, &exported);
  tsr_value_free(vm, v);
  return tsr_vm_destroy(vm) == TSR_SUCCESS ? 0 : 3;
}
