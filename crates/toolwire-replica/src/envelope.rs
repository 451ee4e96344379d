//! The wire format between replicas: one JSON object per message.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolwire::BusEvent;

/// One message on the bus, tagged with the replica that published it.
///
/// ```json
/// {"replica":"9f3c…","seq":7,"kind":"event","event":{"event":"list_changed","list":"tools"}}
/// {"replica":"9f3c…","seq":8,"kind":"defined","name":"greet","definition":{"text":"hi"}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The publishing replica's id: a replica ignores its own messages
    /// (it delivered them locally when it published them).
    pub replica: String,
    /// Consecutive per publisher from 1, in publication order.
    pub seq: u64,
    /// What happened.
    #[serde(flatten)]
    pub body: Body,
}

/// What an [`Envelope`] carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Body {
    /// A notification for listen streams.
    Event {
        /// The event.
        event: BusEvent,
    },
    /// A shared tool was defined: apply it before the `list_changed` that
    /// follows from the same publisher.
    Defined {
        /// The tool's name.
        name: String,
        /// Its definition, as stored.
        definition: Value,
    },
    /// A shared tool was removed.
    Undefined {
        /// The tool's name.
        name: String,
    },
    /// The publisher dropped messages: reload the shared tools and tell
    /// every listener that every list changed.
    Resync,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire::ListChanged;

    #[test]
    fn envelopes_round_trip_with_the_replica_tag() {
        let cases = [
            (
                Body::Event {
                    event: ListChanged::Tools.into(),
                },
                json!({"replica": "r1", "seq": 3, "kind": "event",
                       "event": {"event": "list_changed", "list": "tools"}}),
            ),
            (
                Body::Event {
                    event: BusEvent::ResourceUpdated {
                        uri: "file:///a".into(),
                    },
                },
                json!({"replica": "r1", "seq": 3, "kind": "event",
                       "event": {"event": "resource_updated", "uri": "file:///a"}}),
            ),
            (
                Body::Defined {
                    name: "greet".into(),
                    definition: json!({"text": "hi"}),
                },
                json!({"replica": "r1", "seq": 3, "kind": "defined",
                       "name": "greet", "definition": {"text": "hi"}}),
            ),
            (
                Body::Undefined {
                    name: "greet".into(),
                },
                json!({"replica": "r1", "seq": 3, "kind": "undefined", "name": "greet"}),
            ),
            (
                Body::Resync,
                json!({"replica": "r1", "seq": 3, "kind": "resync"}),
            ),
        ];
        for (body, wire) in cases {
            let e = Envelope {
                replica: "r1".into(),
                seq: 3,
                body,
            };
            assert_eq!(serde_json::to_value(&e).expect("serialises"), wire);
            assert_eq!(serde_json::from_value::<Envelope>(wire).expect("parses"), e);
        }
    }

    #[test]
    fn unknown_kinds_are_refused() {
        let wire = json!({"replica": "r1", "seq": 1, "kind": "reboot"});
        assert!(serde_json::from_value::<Envelope>(wire).is_err());
    }
}
