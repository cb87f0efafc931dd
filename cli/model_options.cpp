// --model NAME or --config PATH: the model every model-taking subcommand runs on.
#include "commands.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

scaling::TransformerConfig resolve_model([[maybe_unused]] const std::string& subcommand, const std::string& model,
                                         const std::string& config) {
  if (model.empty() == config.empty())
    throw UsageError(model.empty() ? "--model or --config is needed: give --model NAME or --config PATH"
                                   : "--model and --config: give one of them, not both");
  return model.empty() ? for_option("--config", [&] { return scaling::load_hf_config(config); })
                       : for_option("--model", [&] { return scaling::model(model); });
}

}  // namespace cli
