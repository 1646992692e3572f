# Copyright 2019 Open Source Robotics Foundation, Inc.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from .convert import get_message_slot_types
from .convert import message_to_csv
from .convert import message_to_ordereddict
from .convert import message_to_yaml
from .get_interfaces import get_action_interfaces
from .get_interfaces import get_interface_packages
from .get_interfaces import get_interface_path
from .get_interfaces import get_interfaces
from .get_interfaces import get_message_interfaces
from .get_interfaces import get_service_interfaces
from .import_message import import_message_from_namespaced_type
from .set_message import set_message_fields


__all__ = [
    'get_action_interfaces',
    'get_interface_packages',
    'get_message_interfaces',
    'get_service_interfaces',
    'get_interface_path',
    'get_interfaces',
    'get_message_slot_types',
    'import_message_from_namespaced_type',
    'message_to_csv',
    'message_to_ordereddict',
    'message_to_yaml',
    'set_message_fields',
]
