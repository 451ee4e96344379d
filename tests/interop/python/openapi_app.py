"""A small REST API (FastAPI) serving its own OpenAPI 3.1 document at
/openapi.json, for `toolwire gateway`'s OpenAPI upstreams
(tests/interop/gateway-openapi.mjs). Binds a free loopback port and prints
it on stdout. In memory; every start begins with the same two pets."""

import socket
import sys

import uvicorn
from fastapi import FastAPI, Header, HTTPException, Query, Response
from pydantic import BaseModel, Field, field_validator

app = FastAPI(title="pets", version="1.0.0")


class PetIn(BaseModel):
    """A pet to add: referenced from the request body as a component."""

    name: str = Field(min_length=1, description="What the pet answers to")
    tag: str | None = Field(default=None, description="A kind, such as dog")

    @field_validator("name")
    @classmethod
    def no_reserved_names(cls, v: str) -> str:
        # A rule the JSON Schema cannot say: only the API knows it (422).
        if v.lower() == "admin":
            raise ValueError("the name 'admin' is reserved")
        return v


class Pet(PetIn):
    id: int


PETS: dict[int, Pet] = {
    1: Pet(id=1, name="Rex", tag="dog"),
    2: Pet(id=2, name="Tom", tag="cat"),
}


@app.get("/pets", operation_id="list_pets", summary="List the pets")
def list_pets(
    limit: int = Query(10, ge=1, le=100, description="At most this many"),
    tag: str | None = Query(None, description="Only pets of this kind"),
) -> list[Pet]:
    pets = [p for p in PETS.values() if tag is None or p.tag == tag]
    return pets[:limit]


@app.get("/pets/{pet_id}", operation_id="get_pet", summary="Read one pet")
def get_pet(pet_id: int) -> Pet:
    if pet_id not in PETS:
        raise HTTPException(status_code=404, detail=f"Pet {pet_id} not found")
    return PETS[pet_id]


@app.post("/pets", operation_id="create_pet", status_code=201, summary="Add a pet")
def create_pet(pet: PetIn) -> Pet:
    new = Pet(id=max(PETS, default=0) + 1, **pet.model_dump())
    PETS[new.id] = new
    return new


@app.delete("/pets/{pet_id}", operation_id="delete_pet", status_code=204, summary="Remove a pet")
def delete_pet(pet_id: int) -> Response:
    if PETS.pop(pet_id, None) is None:
        raise HTTPException(status_code=404, detail=f"Pet {pet_id} not found")
    return Response(status_code=204)


@app.get("/whoami")
def whoami(x_api_key: str | None = Header(None)) -> dict:
    """Which key the request carried (FastAPI names this operation itself)."""
    return {"key": x_api_key}


@app.post("/admin/reset", operation_id="admin_reset")
def admin_reset() -> dict:
    PETS.clear()
    return {"reset": True}


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it, on a kept-alive
    # connection, the response body (written after its headers) waits for
    # the client's delayed ACK, 40 ms a request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is printed: a client that connects at once
    # waits in the backlog until Uvicorn accepts, instead of being refused
    # while Uvicorn starts (which the interop run once saw as "fetch
    # failed"). Uvicorn listens on the socket again, which only sets the
    # backlog.
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
