#include <tessera/tessera.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  tsr_vm* vm;
  tsr_value seven, r;
  int64_t n;
  int rc = 0;
  const char* src = "fn square(x) { return x * x }\nprint(square(3))\n";
  if (tsr_vm_create(NULL, &vm) != TSR_SUCCESS) {          /* NULL: the default options */
    fprintf(stderr, "%s\n", tsr_last_error(NULL));
    return 1;
  }
  if (tsr_run_source(vm, "first.tsb", src, strlen(src)) == TSR_SUCCESS &&   /* prints 9 */
      tsr_new_int(vm, 7, &seven) == TSR_SUCCESS &&
      tsr_call_global(vm, "square", &seven, 1, &r) == TSR_SUCCESS &&
      tsr_get_int(vm, r, &n) == TSR_SUCCESS) {
    printf("square(7) = %lld\n", (long long)n);                              /* 49 */
  } else {
    fprintf(stderr, "%s\n%s", tsr_last_error(vm), tsr_last_traceback(vm));
    rc = 1;
  }
  tsr_vm_destroy(vm);                                      /* frees seven and r too */
  return rc;
}
