"""A small inventory, for trying sightline."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    quantity: int
    price: float


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        if item.name in self.items:
            self.items[item.name].quantity += item.quantity
        else:
            self.items[item.name] = item

    def total_value(self) -> float:
        total = 0.0
        for item in self.items.values():
            total += item.quantity * item.price
        return total

    def low_stock(self, threshold: int = 3) -> list[str]:
        names = []
        for item in self.items.values():
            if item.quantity < threshold:
                names.append(item.name)
        return names
