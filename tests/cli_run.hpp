#pragma once
// Running the `scaling` CLI (and chapter programs) as a user would, for the CLI tests of every
// subcommand: exit code, stdout and stderr of one command line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace testing {


struct Run {
  int exit_code;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline Run run_program(const std::string& program, const std::string& args) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path();
  const auto tag = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const auto out = dir / ("scaling_cli_out_" + tag), err = dir / ("scaling_cli_err_" + tag);
  const std::string cmd = "'" + program + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline Run run(const std::string& args) { return run_program(SCALING_CLI, args); }


inline int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Each command must fail with exit 1, one line on stderr naming the offending value, nothing on stdout.
inline void expect_rejected(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, named] : cases) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.exit_code == 1);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(named) != std::string::npos);
    CHECK(r.out.empty());
  }
}

}  // namespace testing
