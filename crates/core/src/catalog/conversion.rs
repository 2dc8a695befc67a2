//! What a typed value becomes in hardware units, per [`ConversionKind`]: the bridge between
//! catalog data and the pure functions in [`super::convert`].

use super::convert::{
    em_ticks_to_usecs, em_usecs_to_ticks, hz_to_tick, igb_itr_val, interval_to_rate,
    itr_reg_from_rate, ixgbe_eitr_from_rate, ixgbe_eitr_from_usecs, rate_to_interval,
    ticks_to_nanos, DelayTicks, IntsPerSec, Usecs,
};
use super::model::ConversionKind;
use crate::units::Nanos;
use serde::Serialize;

/// One converted quantity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Converted {
    /// What the quantity is, e.g. `ITR register`.
    pub quantity: String,
    /// Its value.
    pub value: f64,
    /// Its unit, e.g. `256 ns units`.
    pub unit: String,
    /// The whole conversion in words.
    pub text: String,
}

fn converted(quantity: &str, value: f64, unit: &str, text: String) -> Converted {
    Converted {
        quantity: quantity.to_string(),
        value,
        unit: unit.to_string(),
        text,
    }
}

fn us(n: Nanos) -> String {
    let v = n.as_micros_f64();
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0} µs")
    } else {
        format!("{v:.1} µs")
    }
}

/// Conversions of `n` (the value as typed) for `kind`. Values that have no conversion (0 for
/// a rate, negative numbers) give none.
pub fn convert(kind: ConversionKind, n: i64) -> Vec<Converted> {
    let Ok(n) = u64::try_from(n) else {
        return Vec::new();
    };
    match kind {
        ConversionKind::ItrRate256ns => itr_rate(n),
        ConversionKind::IxgbeItrRate => ixgbe_rate(n),
        ConversionKind::Ticks1024ns => ticks(n),
        ConversionKind::IgbUsecs => igb_usecs(n),
        ConversionKind::IxgbeUsecs => ixgbe_usecs(n),
        ConversionKind::UsecsToRate => usecs_to_rate(n),
        ConversionKind::RateToUsecs => rate_to_usecs(n),
        ConversionKind::NsecsToUsecs => nsecs(n),
        ConversionKind::EmUsecsToTicks => em_ticks(n),
        ConversionKind::HzToTick => hz(n),
    }
}

fn itr_rate(n: u64) -> Vec<Converted> {
    let Some(reg) = itr_reg_from_rate(IntsPerSec(n)) else {
        return Vec::new();
    };
    let interval = reg.interval();
    let rate = interval_to_rate(interval).map_or(0, |r| r.0);
    vec![converted(
        "ITR register",
        reg.0 as f64,
        "256 ns units",
        format!(
            "ITR register {} (256 ns units) = {} between interrupts (at most ≈{rate} interrupts/s)",
            reg.0,
            us(interval)
        ),
    )]
}

fn ixgbe_rate(n: u64) -> Vec<Converted> {
    let (Some(reg), Some(eitr)) = (
        itr_reg_from_rate(IntsPerSec(n)),
        ixgbe_eitr_from_rate(IntsPerSec(n)),
    ) else {
        return Vec::new();
    };
    vec![
        converted(
            "driver EITR value",
            reg.0 as f64,
            "256 ns units",
            format!(
                "driver arithmetic: 10^9/({n}·256) = {} (256 ns units)",
                reg.0
            ),
        ),
        converted(
            "EITR interval",
            eitr.interval().as_micros_f64(),
            "µs",
            format!(
                "82599-class hardware keeps 2 µs steps: {} between interrupts",
                us(eitr.interval())
            ),
        ),
    ]
}

fn ticks(n: u64) -> Vec<Converted> {
    let time = ticks_to_nanos(DelayTicks(n));
    vec![converted(
        "delay",
        time.as_micros_f64(),
        "µs",
        format!("{n} ticks × 1.024 µs = {}", us_precise(time)),
    )]
}

fn us_precise(n: Nanos) -> String {
    format!("{:.3} µs", n.as_micros_f64())
}

fn igb_usecs(n: u64) -> Vec<Converted> {
    let val = igb_itr_val(Usecs(n));
    let mut out = vec![converted(
        "itr_val",
        val.0 as f64,
        "0.25 µs units",
        format!(
            "itr_val {} in 0.25 µs steps ({})",
            val.0,
            us(val.interval())
        ),
    )];
    out.extend(usecs_to_rate(n));
    out
}

fn ixgbe_usecs(n: u64) -> Vec<Converted> {
    let eitr = ixgbe_eitr_from_usecs(Usecs(n));
    let mut out = vec![converted(
        "EITR interval",
        eitr.interval().as_micros_f64(),
        "µs",
        format!(
            "EITR field {:#x}: {} in 2 µs steps",
            eitr.0,
            us(eitr.interval())
        ),
    )];
    out.extend(usecs_to_rate(eitr.interval().0 / 1000));
    out
}

fn usecs_to_rate(n: u64) -> Vec<Converted> {
    let Some(rate) = interval_to_rate(Nanos::from_micros(n)) else {
        return Vec::new();
    };
    vec![converted(
        "interrupt rate",
        rate.0 as f64,
        "interrupts/s",
        format!("at most {} interrupts/s", rate.0),
    )]
}

fn rate_to_usecs(n: u64) -> Vec<Converted> {
    let Some(interval) = rate_to_interval(IntsPerSec(n)) else {
        return Vec::new();
    };
    vec![converted(
        "interval",
        interval.as_micros_f64(),
        "µs",
        format!("{} between interrupts", us(interval)),
    )]
}

fn nsecs(n: u64) -> Vec<Converted> {
    vec![converted(
        "time",
        Nanos(n).as_micros_f64(),
        "µs",
        format!("{n} ns = {}", Nanos(n)),
    )]
}

fn em_ticks(n: u64) -> Vec<Converted> {
    let ticks = em_usecs_to_ticks(Usecs(n));
    let back = em_ticks_to_usecs(ticks);
    vec![converted(
        "register ticks",
        ticks.0 as f64,
        "ticks of 1.024 µs",
        format!(
            "{n} µs → register {} ticks of 1.024 µs (reads back as {} µs)",
            ticks.0, back.0
        ),
    )]
}

fn hz(n: u64) -> Vec<Converted> {
    let Some(tick) = hz_to_tick(n) else {
        return Vec::new();
    };
    vec![converted(
        "tick",
        tick.as_micros_f64(),
        "µs",
        format!("one clock tick = {tick}"),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e1000_itr_8000_text() {
        let out = convert(ConversionKind::ItrRate256ns, 8000);
        assert_eq!(out[0].value, 488.0);
        assert_eq!(
            out[0].text,
            "ITR register 488 (256 ns units) = 124.9 µs between interrupts (at most ≈8005 interrupts/s)"
        );
    }

    #[test]
    fn igb_50_us_is_200_quarter_steps() {
        let out = convert(ConversionKind::IgbUsecs, 50);
        assert_eq!(out[0].value, 200.0);
        assert_eq!(out[1].value, 20_000.0);
    }

    #[test]
    fn negative_and_zero_rates_convert_to_nothing() {
        assert!(convert(ConversionKind::ItrRate256ns, 0).is_empty());
        assert!(convert(ConversionKind::Ticks1024ns, -1).is_empty());
    }
}
