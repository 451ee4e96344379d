//! Tests of the handler conversions and errors, alone and through the
//! server pipeline.

use super::*;

fn failed_text(e: HandlerError) -> String {
    match e {
        HandlerError::Failed(text) => text,
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[test]
fn question_mark_turns_common_errors_into_failed_with_their_message() {
    fn io() -> Result<(), HandlerError> {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file",
        ))?;
        Ok(())
    }
    fn json() -> Result<(), HandlerError> {
        serde_json::from_str::<u32>("\"x\"")?;
        Ok(())
    }
    fn boxed() -> Result<(), HandlerError> {
        let e: Box<dyn std::error::Error + Send + Sync> = "plain words".into();
        Err(e)?;
        Ok(())
    }
    assert_eq!(failed_text(io().expect_err("io")), "no such file");
    let json_text = failed_text(json().expect_err("json"));
    assert_eq!(
        json_text,
        serde_json::from_str::<u32>("\"x\"")
            .expect_err("same error")
            .to_string()
    );
    assert!(
        !json_text.contains("Error("),
        "Display, not Debug: {json_text}"
    );
    assert_eq!(failed_text(boxed().expect_err("boxed")), "plain words");
}

#[cfg(feature = "anyhow")]
#[test]
fn question_mark_turns_anyhow_into_failed_with_the_top_message() {
    fn f() -> Result<(), HandlerError> {
        let e = anyhow::anyhow!("root cause").context("what went wrong");
        Err(e)?;
        Ok(())
    }
    assert_eq!(failed_text(f().expect_err("anyhow")), "what went wrong");
}

#[test]
fn protocol_errors_stay_explicit_and_pass_through() {
    let e: HandlerError = ErrorObject::invalid_params("bad").into();
    assert!(matches!(&e, HandlerError::Protocol(o) if o.code == ErrorCode::INVALID_PARAMS));
    assert_eq!(e.into_error_object().code, ErrorCode::INVALID_PARAMS);
    let e = HandlerError::failed("boom").into_error_object();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(e.message, "boom");
}

#[test]
fn results_and_input_requests_convert_for_any_payload() {
    let r: Result<HandlerOutput<u32>, _> =
        Ok::<_, std::io::Error>(HandlerOutput::Complete(1)).into_handler_output();
    assert!(matches!(r, Ok(HandlerOutput::Complete(1))));
    let r: Result<HandlerOutput<u32>, _> = InputRequired::new().into_handler_output();
    assert!(matches!(r, Ok(HandlerOutput::InputRequired(_))));
    let r: Result<HandlerOutput<u32>, _> =
        Err::<HandlerOutput<u32>, _>(HandlerError::NotFound).into_handler_output();
    assert!(matches!(r, Err(HandlerError::NotFound)));
    let r = 7_u32.into_typed_output();
    assert!(matches!(r, Ok(HandlerOutput::Complete(7))));
    let r: Result<HandlerOutput<u32>, _> = InputRequired::new().into_typed_output();
    assert!(matches!(r, Ok(HandlerOutput::InputRequired(_))));
    let r = Err::<u32, _>(HandlerError::failed("x")).into_typed_output();
    assert!(matches!(r, Err(HandlerError::Failed(_))));
    assert!(matches!(
        HandlerOutput::Complete(2).map(|v: u32| v * 2),
        HandlerOutput::Complete(4)
    ));
}
