// The `scaling` command end to end, in process: scaling_main (cli/main.cpp) on a command line taken from
// the input, NUL-separated: the first field is the subcommand, so every subcommand, including ones added
// later, is reached (the seed corpus holds a command line of each from the README). Contract: exit 0, 1 or
// 2 (3 is an internal error); an error is exactly one line on stderr starting "scaling: " with nothing on
// stdout; an answer prints nothing on stderr, no inf or NaN, no runaway digits, and JSON with null only
// where a key documents it; stdout and stderr are valid UTF-8 without control characters (C0 but newline,
// DEL, C1); no number of 25 digits or more. A first field "consistent" runs one value of an option shared
// by several subcommands through each of them: all must accept it or all refuse it naming the option.
#include <sys/mman.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "../cli/scaling_main.hpp"
#include "contract.hpp"

namespace {

int captured_stdout = -1;  // fmt::print writes to the C stdout; it goes to this memory file

// Keys whose value may be null, as the README documents: no critical batch, a result not computed, a chip
// figure the chip does not have.
const std::set<std::string>& nullable() {
  static const std::set<std::string> keys{"critical_batch", "correct", "int8_flops_per_s", "ici_oneway_bytes_per_s",
                                          "ici_bidi_bytes_per_s", "ici_hop_latency_s", "pcie_bytes_per_s",
                                          "dcn_bytes_per_s_per_host",
                                          // `chips --json`: a GPU figure a TPU does not have (and fp4 on
                                          // GPUs without it) is null, as int8 is on chips without int8.
                                          "fp4_flops_per_s", "fp8_flops_per_s", "gpus_per_node",
                                          "nvlink_bytes_per_s", "ib_bytes_per_s",
                                          // chapter 12's GPU anatomy and NVLink node: absent on TPUs, and a
                                          // figure a GPU generation lacks (TMEM before Blackwell, a clock
                                          // no source gives) is null.
                                          "anatomy", "nvlink_node", "base_clock_hz", "boost_clock_hz",
                                          "tmem_bytes_per_sm"};
  return keys;
}

void check_json(const nlohmann::json& j, const std::string& key) {
  if (j.is_null()) fuzz::require(nullable().count(key) > 0, "JSON null at key '" + key + "'");
  if (j.is_number_float()) fuzz::finite(j.get<double>(), "JSON number at '" + key + "'");
  if (j.is_object())
    for (const auto& [k, v] : j.items()) check_json(v, k);
  if (j.is_array())
    for (const auto& v : j) check_json(v, key);
}

void check_text(const std::string& out) {
  static const std::regex non_finite(R"((^|[^A-Za-z])(inf|nan)([^A-Za-z]|$))", std::regex::icase);
  // A run of digits that is a number, not part of a name the user gave (an array "A5555…" is echoed as is).
  static const std::regex long_digits(R"((^|[^A-Za-z0-9_])[0-9]{25})");
  fuzz::require(!std::regex_search(out, non_finite), "output holds inf or NaN:\n" + out);
  fuzz::require(!std::regex_search(out, long_digits), "output holds a runaway number:\n" + out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  captured_stdout = memfd_create("scaling_stdout", 0);
  if (captured_stdout < 0 || dup2(captured_stdout, STDOUT_FILENO) < 0) fuzz::broken("cannot capture stdout");
  return 0;
}

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  if (ftruncate(STDOUT_FILENO, 0) != 0 || lseek(STDOUT_FILENO, 0, SEEK_SET) != 0) fuzz::broken("cannot reset stdout");
  std::ostringstream out, err;
  auto* cout_buf = std::cout.rdbuf(out.rdbuf());
  auto* cerr_buf = std::cerr.rdbuf(err.rdbuf());
  int code = -1;
  try {
    code = scaling_main(static_cast<int>(args.size()), argv.data());
  } catch (const std::exception& e) {
    std::cout.rdbuf(cout_buf);
    std::cerr.rdbuf(cerr_buf);
    fuzz::broken(std::string("scaling_main let an exception escape: ") + e.what());
  }
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);
  std::fflush(stdout);
  const off_t printed = lseek(STDOUT_FILENO, 0, SEEK_CUR);
  std::string text(static_cast<size_t>(printed), '\0');
  if (printed > 0 && pread(STDOUT_FILENO, text.data(), text.size(), 0) != printed) fuzz::broken("cannot read stdout");
  text += out.str();
  return {code, text, err.str()};
}

// The contract of one run.
void check(const Result& r) {
  const auto& [code, text, message] = r;
  fuzz::require(code == 0 || code == 1 || code == 2, "exit code " + std::to_string(code) + ": " + message);
  fuzz::require(fuzz::printable_output(message), "stderr holds a control character or invalid UTF-8: " + message);
  fuzz::require(fuzz::printable_output(text), "stdout holds a control character or invalid UTF-8:\n" + text);
  if (code != 0) {
    fuzz::require(message.rfind("scaling: ", 0) == 0, "error does not start with 'scaling: ': " + message);
    fuzz::require(message.back() == '\n' && fuzz::one_line(message.substr(0, message.size() - 1)),
                  "error is not one line: " + message);
    fuzz::require(text.empty(), "an error printed output too: " + text);
    return;
  }
  fuzz::require(message.empty(), "an answer printed on stderr: " + message);
  check_text(text);
  if (!text.empty() && (text[0] == '{' || text[0] == '[')) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      fuzz::broken(std::string("--json output is not JSON: ") + e.what());
    }
    check_json(j, "");
  }
}

// Options that several subcommands share, each with a command line per subcommand that is valid for a
// sensible value: one value must be accepted by all or refused by all, and a refusal must name the option.
struct Shared {
  std::string option;
  std::vector<std::vector<std::string>> commands;
};
const std::vector<Shared>& shared() {
  static const std::vector<Shared> s{
      {"--chips",
       {{"serve", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch", "1", "--context", "8"},
        {"train", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch-tokens", "1k"}}},
      {"--mfu",
       {{"train", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch-tokens", "1k", "--slice", "4x4"},
        {"serve", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch", "1", "--context", "8", "--chips", "8",
         "--prefill-len", "8"}}},
      {"--slice",
       {{"collective", "--chip", "tpu-v5e", "--op", "all-gather", "--axes", "0", "--bytes", "8"},
        {"serve", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch", "1", "--context", "8"},
        {"train", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch-tokens", "1k"}}},
      {"--pods",
       {{"train", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch-tokens", "1M", "--slice", "4x4"},
        {"plan", "--model", "llama2-7b", "--chip", "tpu-v5e", "--batch-tokens", "1M", "--slice", "4x4"}}},
      {"--batch-tokens",
       {{"train", "--model", "llama2-7b", "--chip", "tpu-v5e", "--slice", "4x4"},
        {"plan", "--model", "llama2-7b", "--chip", "tpu-v5e", "--slice", "4x4"}}},
      {"--hbm-bw",
       {{"matmul", "--chip", "tpu-v5e", "--B", "8", "--D", "8", "--F", "8"},
        {"collective", "--chip", "tpu-v5e", "--op", "all-gather", "--axes", "0", "--bytes", "8", "--slice", "4x4"}}},
  };
  return s;
}

void consistent(const std::vector<std::string>& fields) {
  if (fields.size() < 4 || fields[2].empty()) return;
  const auto& s = shared()[static_cast<unsigned char>(fields[2][0]) % shared().size()];
  const std::string& value = fields[3];
  std::string first;
  int first_refused = -1;
  for (auto command : s.commands) {
    std::vector<std::string> args{"scaling"};
    args.insert(args.end(), command.begin(), command.end());
    args.push_back(s.option);
    args.push_back(value);
    const Result r = run(args);
    check(r);
    const bool refused = r.code != 0 && r.err.rfind("scaling: " + s.option, 0) == 0;
    if (first_refused < 0) {
      first_refused = refused;
      first = command[0] + ": " + (refused ? r.err : "accepted");
    } else {
      fuzz::require(refused == static_cast<bool>(first_refused),
                    s.option + " '" + value + "': " + first + " but " + command[0] + ": " + (refused ? r.err : "accepted"));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"scaling"};
  args.emplace_back();
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) args.emplace_back();
    else args.back() += static_cast<char>(data[i]);
  }
  if (args.size() > 64) return 0;
  if (args[1] == "consistent") {
    consistent(args);
    return 0;
  }
  check(run(args));
  return 0;
}
