#include "tools/tessera-vm/option_suggestion.h"

#include <algorithm>
#include <cstddef>

namespace tessera::cli {

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions
// and swaps of adjacent characters each cost 1.
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::optional<std::string> nearest_option(const std::string& typed, const std::vector<std::string>& known) {
  const std::string name = typed.substr(0, typed.find('='));
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& k : known) {
    const size_t d = edit_distance(name, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

std::string unknown_option_message(const std::string& typed, const std::vector<std::string>& known) {
  std::string out = "unknown option '" + typed.substr(0, typed.find('=')) + "'";
  if (auto near = nearest_option(typed, known)) out += " (did you mean '" + *near + "'?)";
  return out;
}

}  // namespace tessera::cli
