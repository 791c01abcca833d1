// The trace viewer: --dump DIR/index.html, one self-contained page (no
// network, no external scripts or fonts: the script and style are inline)
// that shows what the JIT did in a run: the --stats summary; the source with
// each line's hotness and markers for the traces that start there and the
// exits that resume there; each trace with its IR as recorded and after each
// pass (the pass's changes marked), as compiled with its snapshots, its T1
// assembly and T2 LLVM IR, its exits with their counts and side traces, and
// the fused kernels it calls; each kernel with its region, kernel IR, LLVM
// IR, CUDA C++ and PTX (from the dump's kernel files); and the trace tree
// (traces.svg); the GPU's kernels as CUPTI recorded them, each with its
// roofline (gpu_profile_json.h). Search by trace number, line, kernel or
// text; sections fold.
//
// The page's template is runtime/viewer/trace_viewer.html (embedded at build
// time); this fills in the run's data as JSON.
#pragma once

#include <string>

#include "runtime/hotspot_observer.h"

namespace tessera {

// The template, with /*TESSERA_DATA*/ where the JSON goes.
const std::string& trace_viewer_page();

// The page for this run. `script_path` is read for the source; `dump_dir`
// for the kernels' files and the trace tree.
std::string trace_viewer_html(const HotspotObserver& rt, const std::string& script_path, double wall_seconds,
                              const std::string& dump_dir);

// Writes DIR/index.html; throws std::runtime_error when it cannot.
void write_trace_viewer(const HotspotObserver& rt, const std::string& script_path, double wall_seconds,
                        const std::string& dump_dir);

}  // namespace tessera
