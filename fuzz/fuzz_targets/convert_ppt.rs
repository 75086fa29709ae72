#![no_main]

libfuzzer_sys::fuzz_target!(
    |data: &[u8]| kts_fuzz::target("convert_ppt").expect("listed in kts_fuzz::TARGETS")(data)
);
