#![cfg(any())]
