//! Temperatures read in Fahrenheit, shown in Celsius.

fn to_celsius(fahrenheit: f64) -> f64 {
    (fahrenheit - 32.0) * 9.0 / 5.0
}

pub fn describe(fahrenheit: f64) -> String {
    format!("{:.1}°C", to_celsius(fahrenheit))
}
