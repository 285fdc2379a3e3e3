// The executor table (sweep/executors/executors.def) and the settings every executor reads.

#include <algorithm>

#include "runner/word_lists.h"
#include "sweep/executor.h"
#include "tsrepro/error.h"

namespace tsrepro {

ExecutorOptions::ExecutorOptions(const std::string& executor, const std::vector<std::string>& entries,
                                 const std::vector<ExecutorOptionSpec>& accepted)
    : executor_(executor) {
  std::vector<std::string> keys;
  for (const ExecutorOptionSpec& spec : accepted) keys.push_back(spec.key + " (" + spec.meaning + ")");
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) throw UserError("--executor-opt " + entry + ": not KEY=VALUE");
    const std::string key = entry.substr(0, equals);
    const auto spec =
        std::find_if(accepted.begin(), accepted.end(), [&](const ExecutorOptionSpec& s) { return s.key == key; });
    if (spec == accepted.end())
      throw UserError("--executor-opt " + key + ": the " + executor + " executor takes no such setting" +
                      (keys.empty() ? std::string(" (it takes none)") : "; it takes " + joined(keys, ", ")));
    std::vector<std::string>& values = values_[key];
    if (!values.empty() && !spec->repeatable)
      throw UserError("--executor-opt " + key + ": given twice (the " + executor + " executor takes one)");
    values.push_back(entry.substr(equals + 1));
  }
}

std::string ExecutorOptions::text(const std::string& key, const std::string& fallback) const {
  const auto found = values_.find(key);
  return found == values_.end() ? fallback : found->second.front();
}

std::vector<std::string> ExecutorOptions::texts(const std::string& key) const {
  const auto found = values_.find(key);
  return found == values_.end() ? std::vector<std::string>{} : found->second;
}

int ExecutorOptions::positive_int(const std::string& key, int fallback) const {
  const auto found = values_.find(key);
  if (found == values_.end()) return fallback;
  const std::string& value = found->second.front();
  size_t used = 0;
  int number = 0;
  try {
    number = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (value.empty() || used != value.size() || number < 1)
    throw UserError("--executor-opt " + key + "=" + value + ": the " + executor_ +
                    " executor wants a whole number >= 1");
  return number;
}

const std::vector<ExecutorEntry>& executor_table() {
  static const std::vector<ExecutorEntry> table = {
#define TSREPRO_EXECUTOR(factory, name, description) {name, description, factory},
#include "sweep/executors/executors.def"
#undef TSREPRO_EXECUTOR
  };
  return table;
}

std::vector<std::string> executor_names() {
  std::vector<std::string> names;
  for (const ExecutorEntry& entry : executor_table()) names.push_back(entry.name);
  return names;
}

std::unique_ptr<Executor> make_executor(const std::string& name, const ExecutorSetup& setup) {
  for (const ExecutorEntry& entry : executor_table())
    if (entry.name == name) return entry.make(setup);
  throw UserError("--executor " + name + ": no such executor (there are " + joined(executor_names(), ", ") + ")");
}

}  // namespace tsrepro
