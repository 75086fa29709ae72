kts_cli::tool_main!("kts-eval", kts_eval::Args, kts_eval::run);
