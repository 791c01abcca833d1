#include "runtime/device/ptxas_report.h"

#include <charconv>
#include <string>

namespace tessera::device {

namespace {

// The number just before `unit` in `line` ("... 12 bytes spill stores" with
// unit " bytes spill stores" -> 12); nullopt when `unit` is absent or not
// preceded by a number.
std::optional<int> number_before(std::string_view line, std::string_view unit) {
  const size_t at = line.find(unit);
  if (at == std::string_view::npos) return std::nullopt;
  size_t begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == at) return std::nullopt;
  int value = 0;
  std::from_chars(line.data() + begin, line.data() + at, value);
  return value;
}

// "Used 10 registers": the number after `word`.
std::optional<int> number_after(std::string_view line, std::string_view word) {
  const size_t at = line.find(word);
  if (at == std::string_view::npos) return std::nullopt;
  const char* first = line.data() + at + word.size();
  int value = 0;
  auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), value);
  if (ec != std::errc() || ptr == first) return std::nullopt;
  return value;
}

}  // namespace

std::optional<PtxasReport> parse_ptxas_report(std::string_view log, std::string_view kernel) {
  const std::string entry = "Compiling entry function '" + std::string(kernel) + "'";
  PtxasReport report;
  bool in_entry = false;       // inside the kernel's "Compiling entry function" section
  bool in_properties = false;  // the last "Function properties for" named the kernel
  while (!log.empty()) {
    const size_t eol = log.find('\n');
    const std::string_view line = log.substr(0, eol);
    log = eol == std::string_view::npos ? std::string_view() : log.substr(eol + 1);

    if (line.find("Compiling entry function '") != std::string_view::npos) {
      if (in_entry) break;  // the next kernel's section
      in_entry = line.find(entry) != std::string_view::npos;
      continue;
    }
    if (!in_entry) continue;
    constexpr std::string_view kProperties = "Function properties for ";
    if (const size_t at = line.find(kProperties); at != std::string_view::npos) {
      in_properties = line.substr(at + kProperties.size()) == kernel;
      continue;
    }
    if (in_properties && line.find("bytes stack frame") != std::string_view::npos) {
      report.stack_bytes = number_before(line, " bytes stack frame").value_or(0);
      report.spill_stores = number_before(line, " bytes spill stores").value_or(0);
      report.spill_loads = number_before(line, " bytes spill loads").value_or(0);
      continue;
    }
    if (auto registers = number_after(line, "Used ")) {
      if (line.find(" registers") == std::string_view::npos) continue;
      report.registers = *registers;
      report.shared_bytes = number_before(line, " bytes smem").value_or(0);
    }
  }
  if (report.registers < 0) return std::nullopt;
  return report;
}

}  // namespace tessera::device
