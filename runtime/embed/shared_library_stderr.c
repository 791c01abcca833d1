/* Linked into libtessera.so only. Debian's libasmjit.a is not built with
 * -fPIC, and its one reference to outside data, `stderr` (asmjit's debug
 * output), is a PC-relative one that a shared library cannot bind to libc.
 * This hidden definition gives it a local `stderr` to bind to, pointing at
 * libc's standard error stream (glibc's _IO_2_1_stderr_, which libc's own
 * `stderr` points at unless a program reassigns it). */
struct _IO_FILE;
extern struct _IO_FILE _IO_2_1_stderr_;
__attribute__((visibility("hidden"))) struct _IO_FILE* stderr = &_IO_2_1_stderr_;
