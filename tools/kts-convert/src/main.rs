kts_cli::tool_main!("kts-convert", kts_convert::Args, kts_convert::run);
