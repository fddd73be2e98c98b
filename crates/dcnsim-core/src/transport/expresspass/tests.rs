//! ExpressPass end to end on small fabrics (see also tests/expresspass.rs).
