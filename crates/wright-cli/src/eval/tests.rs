use super::*;
use pretty_assertions::assert_eq;

#[test]
fn compare_makes_every_combination() {
    let one = settings(&["tool-calling=native,text".into()]).unwrap();
    let labels: Vec<&str> = one.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, vec!["tool-calling=native", "tool-calling=text"]);
    assert_eq!(
        one[1].args,
        vec!["--tool-calling".to_string(), "text".into()]
    );
    let two = settings(&["map=on,off".into(), "constrain=auto,off".into()]).unwrap();
    assert_eq!(two.len(), 4);
    assert_eq!(two[3].label, "map=off constrain=off");
    assert_eq!(
        two[3].args,
        vec!["--assist-piece", "map=off", "--constrain", "off"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    );
    assert_eq!(settings(&[]).unwrap()[0].label, "default");
    assert!(settings(&["api-key=a,b".into()]).is_err());
    assert!(settings(&["map".into()]).is_err());
}

#[test]
fn a_piece_of_the_help_is_compared_by_its_new_name_or_its_old_flag_with_a_warning() {
    let new = settings(&["assist:first-look=on,off".into()]).unwrap();
    let old = settings(&["first-look=on,off".into()]).unwrap();
    for (setting, label) in new
        .iter()
        .zip(["assist:first-look=on", "assist:first-look=off"])
    {
        assert_eq!(setting.label, label);
    }
    assert_eq!(old[1].label, "first-look=off");
    assert_eq!(new[1].args, old[1].args);
    assert_eq!(new[1].args, vec!["--assist-piece", "first-look=off"]);
    let level = settings(&["assist=auto,off".into()]).unwrap();
    assert_eq!(level[1].args, vec!["--assist", "off"]);
    assert!(settings(&["assist:tests=on,off".into()]).is_err());
    assert_eq!(
        deprecated_compares(&["first-look=on,off".into(), "assist:retest=on,off".into()]),
        vec!["--compare first-look is deprecated: use --compare assist:first-look=on,off"]
    );
    assert_eq!(canonical("last-change"), canonical("assist:last_change"));
}
