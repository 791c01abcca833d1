#include "codegen/host/llvm/object_disassembly.h"

#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

namespace tessera::jit {

namespace {

struct LineRow {
  uint64_t address;
  uint32_t line;  // IR instruction + 1; 0: none
  bool exit;      // column 1: the guard's exit code
};

// What heads a run of code: the IR instruction, and for a guard's exit
// code (column 1) the snapshot it exits through.
std::string heading(const TraceIR& ir, uint32_t line, bool exit) {
  if (line == 0 || line > ir.size()) return "; (no IR instruction)";
  const IRRef r = line - 1;
  const IRIns& in = ir[r];
  char buf[96];
  std::snprintf(buf, sizeof buf, "; %04u %s", static_cast<unsigned>(r), ir_op_info(in.op).name);
  std::string out = buf;
  if (exit && in.snap != kNoSnap) out += " — its exit through snapshot #" + std::to_string(in.snap);
  return out;
}

// The line-table row in force at `address` (rows sorted by address): the IR
// instruction + 1 (0: none) and whether it is exit code.
std::pair<uint32_t, bool> row_at(const std::vector<LineRow>& rows, uint64_t address) {
  auto row = std::upper_bound(rows.begin(), rows.end(), address, [](uint64_t a, const LineRow& r) { return a < r.address; });
  if (row == rows.begin()) return {0, false};
  return {std::prev(row)->line, std::prev(row)->exit};
}

}  // namespace

std::string disassemble_trace_object(const std::string& object, const TraceIR& ir) {
  llvm::InitializeNativeTargetDisassembler();
  auto buf = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(object), "trace.o", false);
  auto obj = llvm::object::ObjectFile::createObjectFile(buf->getMemBufferRef());
  if (!obj) {
    llvm::consumeError(obj.takeError());
    return "; (T2's object could not be read)\n";
  }
  const llvm::Triple triple = (*obj)->makeTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), error);
  if (!target) return "; (no disassembler: " + error + ")\n";
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple.str()));
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCAsmInfo> mai(target->createMCAsmInfo(*mri, triple.str(), options));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple.str(), "", ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii) return "; (no disassembler for " + triple.str() + ")\n";
  llvm::MCContext mc(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, mc));
  std::unique_ptr<llvm::MCInstPrinter> printer(target->createMCInstPrinter(triple, 1 /* Intel */, *mai, *mii, *mri));
  if (!dis || !printer) return "; (no disassembler for " + triple.str() + ")\n";
  // Branch targets, so that a jump says where it goes in IR terms.
  std::unique_ptr<llvm::MCInstrAnalysis> branches(target->createMCInstrAnalysis(mii.get()));

  // The line table, by section: address -> IR instruction + 1.
  std::map<uint64_t, std::vector<LineRow>> rows;
  const std::unique_ptr<llvm::DWARFContext> dwarf = llvm::DWARFContext::create(**obj);
  for (const auto& cu : dwarf->compile_units())
    if (const llvm::DWARFDebugLine::LineTable* table = dwarf->getLineTableForUnit(cu.get()))
      for (const auto& row : table->Rows)
        rows[row.Address.SectionIndex].push_back(
            {row.Address.Address, row.EndSequence ? 0u : row.Line, !row.EndSequence && row.Column == 1});
  for (auto& [section, r] : rows)
    std::stable_sort(r.begin(), r.end(), [](const LineRow& a, const LineRow& b) { return a.address < b.address; });

  std::string out;
  for (const llvm::object::SectionRef& section : (*obj)->sections()) {
    if (!section.isText()) continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    // Function names at their addresses.
    std::map<uint64_t, std::string> names;
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto sec = sym.getSection();
      auto name = sym.getName();
      auto addr = sym.getAddress();
      if (!sec || !name || !addr || *sec != section) {
        if (!sec) llvm::consumeError(sec.takeError());
        if (!name) llvm::consumeError(name.takeError());
        if (!addr) llvm::consumeError(addr.takeError());
        continue;
      }
      if (!name->empty()) names[*addr] = name->str();
    }
    const std::vector<LineRow>& lines = rows[section.getIndex()];
    const auto bytes = llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(contents->data()), contents->size());
    const uint64_t base = section.getAddress();
    uint32_t shown = ~0u;
    bool shown_exit = false;
    for (uint64_t off = 0; off < bytes.size();) {
      const uint64_t at = base + off;
      if (auto n = names.find(at); n != names.end()) {
        out += n->second + ":\n";
        shown = ~0u;
      }
      const auto [line, exit] = row_at(lines, at);
      if (line != shown || exit != shown_exit) {
        out += heading(ir, line, exit) + "\n";
        shown = line;
        shown_exit = exit;
      }
      llvm::MCInst inst;
      uint64_t size = 0;
      std::string text;
      llvm::raw_string_ostream os(text);
      if (dis->getInstruction(inst, size, bytes.slice(off), at, llvm::nulls()) == llvm::MCDisassembler::Success) {
        printer->printInst(&inst, at, "", *sti, os);
        uint64_t to = 0;
        if (branches && branches->evaluateBranch(inst, at, size, to) && to >= base && to < base + bytes.size()) {
          // "; to f9: 0008 GUARDT — its exit through snapshot #1", or the function it enters.
          char hex[24];
          std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(to));
          auto n = names.find(to);
          const auto [to_line, to_exit] = row_at(lines, to);
          os << "\t; to " << hex;
          if (n != names.end())
            os << ": " << n->second;
          else if (to_line != 0 && to_line <= ir.size())  // shared return code has no IR instruction
            os << ": " << heading(ir, to_line, to_exit).substr(2);
        }
      } else {
        size = 1;
        os << "\t.byte " << static_cast<unsigned>(bytes[off]);
      }
      os.flush();
      char addr[24];
      std::snprintf(addr, sizeof addr, "%6llx:", static_cast<unsigned long long>(at));
      out += addr + text + "\n";
      off += size == 0 ? 1 : size;
    }
  }
  return out;
}

}  // namespace tessera::jit
