//! Names written by hand (`as_str`) are the names serde reads and writes: a wire value is never
//! taken from `Debug`.

use headroom_spec::Reducer;
use headroom_spec::scenario::{Executor, Method, RatePer, Senders};
use headroom_spec::target::Signal;

fn serde_name<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .expect("serialises")
        .as_str()
        .expect("a unit variant is a string")
        .to_owned()
}

#[test]
fn every_wire_name_is_the_serde_name() {
    use Method::*;
    for method in [Get, Head, Post, Put, Patch, Delete, Options] {
        assert_eq!(method.as_str(), serde_name(method));
    }
    for senders in [Senders::All, Senders::OnePerRoom] {
        assert_eq!(senders.as_str(), serde_name(senders));
    }
    for per in [RatePer::Sender, RatePer::Room, RatePer::Scenario] {
        assert_eq!(per.as_str(), serde_name(per));
    }
    for signal in [
        Signal::Term,
        Signal::Int,
        Signal::Hup,
        Signal::Quit,
        Signal::Kill,
    ] {
        assert_eq!(signal.as_str(), serde_name(signal));
    }
    use Reducer::{Last, Max, Mean, Median, Min};
    for reducer in [Median, Mean, Min, Max, Last] {
        assert_eq!(reducer.as_str(), serde_name(reducer));
    }
    for executor in [
        Executor::ConstantArrivalRate,
        Executor::RampingArrivalRate,
        Executor::ConstantVus,
        Executor::RampingVus,
    ] {
        assert_eq!(executor.as_str(), serde_name(executor));
    }
}
