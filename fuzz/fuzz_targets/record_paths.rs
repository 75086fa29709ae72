#![no_main]

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| kts_fuzz::target("record_paths").expect("listed in kts_fuzz::TARGETS")(data)
);
