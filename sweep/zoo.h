#pragma once
// A zoo: the models a sweep runs. A directory whose subdirectories each hold a model (model.pt,
// with inputs.pt beside it where there is one) or a case (case.json, from tsrepro import), or a
// manifest, ZOO/zoo.json, that names them (docs/FORMATS.md):
//   {"models": [{"name": "resnet", "model": "resnet/model.pt", "inputs": "resnet/inputs.pt"},
//               {"name": "old_case", "case": "cases/old"}]}
// Paths in a manifest are relative to it.

#include <string>
#include <vector>

namespace tsrepro {

struct ZooEntry {
  std::string name;      // unique in the zoo; letters, digits, '_', '-', '.' (names job directories)
  std::string model;     // model.pt (or IR text) to import; empty for a case
  std::string inputs;    // its inputs.pt; empty: none (an input spec then comes from the model)
  std::string case_dir;  // an existing case directory; empty for a model
};

// The zoo's entries in name order. Throws UserError naming the file or directory at fault.
std::vector<ZooEntry> read_zoo(const std::string& zoo);

}  // namespace tsrepro
