#pragma once
// The outcomes of a minify's queries on disk (its output directory's outcomes.tsv), so that a
// --resume asks no candidate the run before it asked: where a query is an Inductor compile of
// seconds, a killed minify loses none of them.
//
// One line per outcome, appended as each window of candidates is answered and flushed at once:
// "<candidate key>\t<1 interesting|0 not>". The first line says how the candidates were judged
// ("tsrepro-outcomes 1 <judging>"): a file judged otherwise is started anew, never trusted. A
// last line a kill cut short is ignored.

#include <fstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tsrepro {

class OutcomeStore {
 public:
  // Reads what `path` holds for `judging` (one line naming how candidates are judged) and keeps
  // it open for appending. Throws UserError naming the path when it cannot be written.
  OutcomeStore(std::string path, const std::string& judging);

  const std::unordered_map<std::string, bool>& stored() const { return stored_; }
  void append(const std::vector<std::pair<std::string, bool>>& outcomes);

 private:
  std::string path_;
  std::ofstream out_;
  std::unordered_map<std::string, bool> stored_;
};

}  // namespace tsrepro
