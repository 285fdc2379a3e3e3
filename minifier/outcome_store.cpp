// OutcomeStore: a minify's query outcomes in its output directory, read back by --resume.

#include "minifier/outcome_store.h"

#include <sstream>

#include "tsrepro/error.h"

namespace tsrepro {
namespace {

constexpr const char* kHeader = "tsrepro-outcomes 1 ";

// "key\t0" or "key\t1", nothing else: a line cut short by a kill is neither.
bool parse_outcome(const std::string& line, std::string& key, bool& interesting) {
  const size_t tab = line.find('\t');
  if (tab == 0 || tab == std::string::npos || line.size() != tab + 2) return false;
  if (line[tab + 1] != '0' && line[tab + 1] != '1') return false;
  key = line.substr(0, tab);
  interesting = line[tab + 1] == '1';
  return true;
}

}  // namespace

OutcomeStore::OutcomeStore(std::string path, const std::string& judging) : path_(std::move(path)) {
  const std::string header = kHeader + judging;
  bool same_judging = false;
  bool ends_cut_short = false;
  {
    std::ifstream in(path_);
    std::string line;
    if (in && std::getline(in, line) && line == header) {
      same_judging = true;
      std::string key;
      bool interesting = false;
      // getline() also returns a last line without its newline: only whole lines count.
      while (std::getline(in, line)) {
        if (in.eof()) {
          ends_cut_short = !line.empty();
          break;
        }
        if (parse_outcome(line, key, interesting)) stored_[key] = interesting;
      }
    }
  }
  if (same_judging) {
    out_.open(path_, std::ios::app);
    if (ends_cut_short) out_ << '\n';  // the next outcome starts a line of its own
  } else {
    out_.open(path_, std::ios::trunc);
    out_ << header << '\n';
  }
  out_.flush();
  if (!out_) throw UserError(path_ + ": cannot write the minify's query outcomes");
}

void OutcomeStore::append(const std::vector<std::pair<std::string, bool>>& outcomes) {
  if (outcomes.empty()) return;
  std::ostringstream lines;
  for (const auto& [key, interesting] : outcomes) lines << key << '\t' << (interesting ? '1' : '0') << '\n';
  out_ << lines.str();
  out_.flush();
  // Losing the store only costs a resumed run its shortcut: the minify itself goes on.
  if (!out_) out_.clear();
}

}  // namespace tsrepro
