#pragma once
// The one quoting rule for POSIX shell text tsrepro writes (the after-workflow's minify.sh, the
// sweep's Slurm job scripts): a single-quoted word, a quote inside written as '\''.

#include <string>

namespace tsrepro {

std::string shell_quoted(const std::string& text);

}  // namespace tsrepro
