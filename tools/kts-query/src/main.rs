kts_cli::tool_main!("kts-query", kts_query::Args, kts_query::run);
